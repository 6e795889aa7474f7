//===- CacheRoot.cpp - Where cuvilc keeps what it reuses between runs -----===//
#include "ir/CacheRoot.h"

#include <cstdlib>

namespace cuvil {

std::optional<std::string> cacheRoot() {
  if (const char *Dir = std::getenv("CUVIL_CACHE_DIR"))
    return *Dir ? std::optional<std::string>(Dir) : std::nullopt;
  if (const char *Xdg = std::getenv("XDG_CACHE_HOME"); Xdg && *Xdg)
    return std::string(Xdg) + "/cuvil";
  if (const char *Home = std::getenv("HOME"); Home && *Home)
    return std::string(Home) + "/.cache/cuvil";
  return std::nullopt;
}

} // namespace cuvil
