//===- LinkerScript.cpp ---------------------------------------------------===//
#include "emit/LinkerScript.h"

#include "ir/Escape.h"

#include <fmt/format.h>

namespace cuvil {

std::string regionMapComment(const RegionMap &Map) {
  if (Map.empty())
    return "";
  return fmt::format(" * Regions named as the firmware names them ({}): "
                     "{}.\n",
                     cComment(Map.Source), cComment(Map.describe()));
}

std::string alignmentComment(int64_t Alignment) {
  return fmt::format(" * Buffers and sizes are multiples of the {}-byte DMA "
                     "alignment. */\n",
                     Alignment);
}

std::string weightsSection(const std::string &N, int64_t A,
                           const std::string &Region) {
  return fmt::format("  .cuvil.{0}.weights : ALIGN({1})\n  {{\n"
                     "    __cuvil_{0}_weights_start = .;\n"
                     "    KEEP(*(.cuvil.{0}.weights))\n"
                     "    . = ALIGN({1});\n"
                     "    __cuvil_{0}_weights_end = .;\n"
                     "  }} > {2}\n",
                     N, A, Region);
}

std::string arenaSection(const std::string &N, const std::string &Arena,
                         int64_t A, const std::string &Region) {
  return fmt::format("  .cuvil.{0}.arena.{1} (NOLOAD) : ALIGN({2})\n  {{\n"
                     "    __cuvil_{0}_arena_{1}_start = .;\n"
                     "    KEEP(*(.cuvil.{0}.arena.{1}))\n"
                     "    . = ALIGN({2});\n"
                     "    __cuvil_{0}_arena_{1}_end = .;\n"
                     "  }} > {3}\n",
                     N, Arena, A, Region);
}

std::string writeLinkerScript(const std::string &N, const MemoryPlan &Plan,
                              const TargetInfo &T,
                              const std::string &WeightsRegion,
                              bool EmbeddedWeights, const RegionMap &Map) {
  int64_t A = Plan.Alignment;
  std::string S;
  S += fmt::format("/* {}.ld: placement of model '{}' (target {}), generated "
                   "by cuvilc.\n",
                   N, N, cComment(T.Name));
  for (const ArenaPlan &AP : Plan.Arenas)
    S += fmt::format(
        " * Arena in {}: {} bytes (lower bound {}, ratio {:.3f}).\n",
        cComment(AP.Region), AP.Size, AP.LowerBound, AP.ratio());
  S += regionMapComment(Map) + alignmentComment(A);
  S += "SECTIONS\n{\n";
  if (EmbeddedWeights)
    S += weightsSection(N, A, Map.firmwareName(WeightsRegion));
  for (const ArenaPlan &AP : Plan.Arenas)
    S += arenaSection(N, AP.Region, A, Map.firmwareName(AP.Region));
  S += "}\n";
  return S;
}

} // namespace cuvil
