//===- OutputFiles.cpp ----------------------------------------------------===//
#include "emit/OutputFiles.h"

#include "ir/Diagnostic.h"

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <llvm/Support/FileSystem.h>
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

/// Whether A and B name one file: the same existing file (by device and
/// inode), or, when one does not exist yet, the same absolute path once
/// symlinks in the existing part and "." and ".." are resolved.
static bool sameFile(const std::string &A, const std::string &B) {
  bool Same = false;
  if (!llvm::sys::fs::equivalent(A, B, Same))
    return Same;
  std::error_code ECA, ECB;
  std::filesystem::path CA = std::filesystem::weakly_canonical(A, ECA);
  std::filesystem::path CB = std::filesystem::weakly_canonical(B, ECB);
  return !ECA && !ECB && CA == CB;
}

static llvm::Error checkPaths(const std::vector<OutputFile> &Files,
                              const std::vector<InputFile> &Inputs) {
  auto Role = [](const OutputFile &F) { return F.Role ? F.Role : "an output"; };
  for (size_t I = 0; I < Files.size(); ++I) {
    for (const InputFile &In : Inputs)
      if (!In.Path.empty() && sameFile(Files[I].Path, In.Path))
        return makeError("'{}' is {}: writing {} there would replace it; "
                         "give another path",
                         Files[I].Path, In.Role, Role(Files[I]));
    for (size_t J = 0; J < I; ++J)
      if (sameFile(Files[I].Path, Files[J].Path))
        return makeError("'{}' would be written twice, as {} and as {}; "
                         "give them different paths",
                         Files[I].Path, Role(Files[J]), Role(Files[I]));
  }
  return llvm::Error::success();
}

llvm::Error checkOutputFiles(const std::vector<OutputFile> &Files,
                             const std::vector<InputFile> &Inputs) {
  if (auto E = checkPaths(Files, Inputs))
    return E;
  for (const OutputFile &F : Files) {
    std::filesystem::path Dir = std::filesystem::path(F.Path).parent_path();
    if (Dir.empty())
      Dir = ".";
    const char *Role = F.Role ? F.Role : "an output";
    std::error_code EC;
    if (std::filesystem::is_directory(F.Path, EC))
      return makeError("cannot write {} to '{}': it is a directory", Role,
                       F.Path);
    if (!std::filesystem::is_directory(Dir, EC))
      return makeError("cannot write {} to '{}': directory '{}' does not "
                       "exist",
                       Role, F.Path, Dir.string());
    if (::access(Dir.c_str(), W_OK | X_OK) != 0)
      return makeError("cannot write {} to '{}': directory '{}': {}", Role,
                       F.Path, Dir.string(), std::strerror(errno));
  }
  return llvm::Error::success();
}

llvm::Error writeOutputFiles(const std::vector<OutputFile> &Files,
                             const std::vector<InputFile> &Inputs) {
  if (auto E = checkPaths(Files, Inputs))
    return E;
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
