//===- CacheRoot.h - Where cuvilc keeps what it reuses between runs -*- C++
//-*-===//
//
// cuvilc keeps work that depends on the target but not on the model
// between runs: the board runtime `cuvilc run` links (runner/RuntimeCache)
// and the compiled runtime support code of model objects
// (codegen/SupportObject). Both live under one directory:
//
//   $CUVIL_CACHE_DIR, else $XDG_CACHE_HOME/cuvil, else $HOME/.cache/cuvil
//
// CUVIL_CACHE_DIR set but empty: no cache; the work is done in every run.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_IR_CACHEROOT_H
#define CUVIL_IR_CACHEROOT_H

#include <optional>
#include <string>

namespace cuvil {

/// The cache's root directory, or nullopt when there is none (see above).
std::optional<std::string> cacheRoot();

} // namespace cuvil

#endif
