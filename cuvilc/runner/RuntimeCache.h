//===- RuntimeCache.h - Where `cuvilc run` keeps board runtimes --*- C++
//-*-===//
//
// Building a board's runtime library (runtime-baremetal/runtime.mk: a
// dozen C and assembly files) took most of a `cuvilc run` of a small
// model on a board. The library depends on the target's flags, the
// compiler and the runtime's sources, not on the model, so `cuvilc run`
// builds it in a cache directory kept between runs (ir/CacheRoot.h), one
// per runtime.mk command line and compiler, and make rebuilds only what
// changed. Without a cache (CUVIL_CACHE_DIR set but empty) the runtime is
// built in the work directory. Runs at once share a directory under a lock
// file, and each links a copy of the library made while it holds it.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNNER_RUNTIMECACHE_H
#define CUVIL_RUNNER_RUNTIMECACHE_H

#include <llvm/Support/Error.h>

#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// The directory, under Root, of the runtime built by the make command
/// Make (without its CUVIL_RT_BUILD) with the compiler at CCPath: its name
/// is the target's and a hash of both, and of the compiler's time stamp.
std::string runtimeCacheDir(const std::string &Root, const std::string &Target,
                            const std::vector<std::string> &Make,
                            const std::string &CCPath);

/// An exclusive lock on Dir's lock file (Dir.lock), held until destroyed.
class RuntimeCacheLock {
public:
  RuntimeCacheLock() = default;
  RuntimeCacheLock(const RuntimeCacheLock &) = delete;
  RuntimeCacheLock &operator=(const RuntimeCacheLock &) = delete;
  ~RuntimeCacheLock();
  /// Creates Dir (and its parents) and takes the lock, waiting for it.
  llvm::Error acquire(const std::string &Dir);
  /// Gives the lock back (if held).
  void release();

private:
  int FD = -1;
};

} // namespace cuvil

#endif
