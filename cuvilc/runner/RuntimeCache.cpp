//===- RuntimeCache.cpp - Where `cuvilc run` keeps board runtimes ---------===//
#include "runner/RuntimeCache.h"

#include "ir/Diagnostic.h"

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/xxhash.h>
#include <unistd.h>

namespace cuvil {

std::string runtimeCacheDir(const std::string &Root, const std::string &Target,
                            const std::vector<std::string> &Make,
                            const std::string &CCPath) {
  std::string Key;
  for (const std::string &Word : Make)
    Key += Word + '\0';
  Key += CCPath + '\0';
  llvm::sys::fs::file_status Status;
  if (!llvm::sys::fs::status(CCPath, Status))
    Key += std::to_string(
        Status.getLastModificationTime().time_since_epoch().count());
  return fmt::format("{}/runtime-{}-{:016x}", Root, Target,
                     llvm::xxh3_64bits(llvm::StringRef(Key)));
}

RuntimeCacheLock::~RuntimeCacheLock() { release(); }

void RuntimeCacheLock::release() {
  if (FD >= 0) {
    (void)llvm::sys::fs::unlockFile(FD);
    ::close(FD);
    FD = -1;
  }
}

llvm::Error RuntimeCacheLock::acquire(const std::string &Dir) {
  if (std::error_code EC = llvm::sys::fs::create_directories(Dir))
    return makeError("'{}': cannot create it: {}", Dir, EC.message());
  const std::string Path = Dir + ".lock";
  if (std::error_code EC = llvm::sys::fs::openFileForWrite(
          Path, FD, llvm::sys::fs::CD_OpenAlways))
    return makeError("'{}': cannot open it: {}", Path, EC.message());
  if (std::error_code EC = llvm::sys::fs::lockFile(FD)) {
    ::close(FD);
    FD = -1;
    return makeError("'{}': cannot lock it: {}", Path, EC.message());
  }
  return llvm::Error::success();
}

} // namespace cuvil
