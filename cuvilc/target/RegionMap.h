//===- RegionMap.h - Target memory regions -> a firmware's names -*- C++
//-*-===//
//
// A firmware's linker script names its memory as it likes (RAM, SRAM,
// ram0...). The target file names the board's regions (DDR, L2LIM); the
// model's linker-script fragment places its sections with `> REGION`, so
// it has to use the firmware's names. A RegionMap says which firmware name
// each target region has: given on the command line (--region-map
// DDR=RAM,L2LIM=SRAM) or read from the MEMORY block of the firmware's own
// linker script (--regions-from firmware.ld, matched by address).
//
// Only the fragment changes: the object, the header and the plan keep the
// target's names (sections .cuvil.<model>.arena.<target region>).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGET_REGIONMAP_H
#define CUVIL_TARGET_REGIONMAP_H

#include "target/TargetInfo.h"

#include <llvm/Support/Error.h>

#include <map>
#include <string>
#include <vector>

namespace cuvil {

/// One region of a MEMORY block, as a linker script declares it.
struct ScriptRegion {
  std::string Name;
  uint64_t Origin = 0, Length = 0;
  int64_t Line = 0; ///< 1-based line of its declaration.
};

/// The regions declared by the MEMORY block(s) of linker script Text; Path
/// names it in errors. Numbers may be decimal, hex (0x), octal (leading 0)
/// and carry a K or M suffix; an expression cuvil cannot evaluate (symbols,
/// functions) is an error naming the line.
llvm::Expected<std::vector<ScriptRegion>>
parseMemoryRegions(std::string_view Text, const std::string &Path);

struct RegionMap {
  /// Target region -> firmware region; regions not listed keep their name.
  std::map<std::string, std::string> ToFirmware;
  /// Where the names came from ("--region-map", or the script's path).
  std::string Source;
  /// --regions-from: the regions the script declares.
  std::vector<ScriptRegion> Script;

  bool empty() const { return ToFirmware.empty(); }
  /// "DDR=RAM, L2LIM=SRAM" (messages, the fragment's comment).
  std::string describe() const;
  /// The name the firmware's script uses for target region Region.
  std::string firmwareName(const std::string &Region) const;
  /// The target region a user-given name means: a target region's own
  /// name, or a firmware name this map gives one. Empty if neither (or a
  /// firmware name two target regions share).
  std::string targetName(const TargetInfo &T, const std::string &Name) const;
};

/// --region-map TARGET=FIRMWARE,...: every TARGET a region of T, every
/// FIRMWARE a linker-script identifier, no TARGET twice. Errors are usage
/// errors' messages.
llvm::Expected<RegionMap> parseRegionMap(const std::vector<std::string> &Pairs,
                                         const TargetInfo &T);

/// --regions-from SCRIPT: each region of T is given the name of the
/// firmware region that contains its origin; its length in T is cut to
/// what that firmware region has from there on, so that the plan stays
/// inside the firmware's memory. Regions of T the firmware does not have
/// are left out of the map; using one is the caller's error to report
/// (see unmappedMessage).
llvm::Expected<RegionMap> regionMapFromScript(const std::string &Path,
                                              TargetInfo &T);

/// Error for a target region that a --regions-from script has no region
/// for, listing the script's regions.
std::string unmappedMessage(const RegionMap &M, const TargetInfo &T,
                            const std::string &Region);

} // namespace cuvil

#endif
