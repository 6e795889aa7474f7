//===- OutputFiles.cpp ----------------------------------------------------===//
#include "emit/OutputFiles.h"

#include "ir/Diagnostic.h"

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuvil {

static llvm::Error writeTemp(const OutputFile &F, std::string &Temp) {
  Temp = F.Path + ".tmp-XXXXXX";
  int FD = mkstemp(Temp.data());
  if (FD < 0)
    return makeError("cannot write '{}': {}", F.Path, std::strerror(errno));
  const char *P = F.Contents.data();
  size_t Left = F.Contents.size();
  while (Left) {
    ssize_t N = ::write(FD, P, Left);
    if (N < 0) {
      int Err = errno;
      ::close(FD);
      ::unlink(Temp.c_str());
      return makeError("cannot write '{}': {}", F.Path, std::strerror(Err));
    }
    P += N;
    Left -= N;
  }
  fchmod(FD, 0644);
  if (::close(FD) != 0) {
    ::unlink(Temp.c_str());
    return makeError("cannot write '{}': {}", F.Path, std::strerror(errno));
  }
  return llvm::Error::success();
}

llvm::Error writeOutputFiles(const std::vector<OutputFile> &Files) {
  std::vector<std::string> Temps;
  for (const OutputFile &F : Files) {
    std::string T;
    if (auto E = writeTemp(F, T)) {
      for (const std::string &X : Temps)
        ::unlink(X.c_str());
      return E;
    }
    Temps.push_back(T);
  }
  for (size_t I = 0; I < Files.size(); ++I) {
    if (std::rename(Temps[I].c_str(), Files[I].Path.c_str()) != 0) {
      int Err = errno;
      for (size_t J = 0; J < Files.size(); ++J)
        ::unlink(J < I ? Files[J].Path.c_str() : Temps[J].c_str());
      return makeError("cannot write '{}': {}", Files[I].Path,
                       std::strerror(Err));
    }
  }
  return llvm::Error::success();
}

} // namespace cuvil
