//===- TargetInfo.h - A target described by targets/NAME.toml ---*- C++ -*-===//
#ifndef CUVIL_TARGET_TARGETINFO_H
#define CUVIL_TARGET_TARGETINFO_H

#include <cstdint>
#include <llvm/Support/Error.h>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

struct MemoryRegion {
  std::string Name;
  std::string Kind; ///< "lim", "sram", "ddr", "flash" (documentation)
  uint64_t Origin = 0;
  uint64_t Length = 0;
  std::string Access; ///< "rx", "rw", "rwx"
  /// Banks: Count, and either the size of each contiguous bank or the
  /// interleave granularity (bytes after which the next bank starts).
  int64_t Banks = 1;
  int64_t BankSize = 0;
  int64_t BankInterleave = 0;
  /// Line of its [[memory.region]] header in the target file (messages).
  int64_t Line = 0;
  bool writable() const { return Access.find('w') != std::string::npos; }
};

struct TargetInfo {
  std::string Name;
  /// The file it was loaded from, and the line of its name (messages).
  std::string Path;
  int64_t NameLine = 0;
  std::string Description;
  // LLVM code generation.
  std::string Triple, CPU, Features, ABI, CodeModel;
  /// Which kernel bitcode library (built with cuvilc, named after the
  /// target it was built for) this target uses: its own by default; a new
  /// board with a known ISA names an existing one (e.g. "a78").
  std::string Kernels;
  /// How the runtime and the kernel bitcode are compiled for it
  /// (llvm.clang_flags: -march/-mcpu, ABI, code model).
  std::string ClangFlags;
  /// Which boot code of runtime-baremetal/boot/ its images use (runtime.boot;
  /// default: the target's name); a new board of a known family names an
  /// existing one (e.g. "a78" for any AArch64 board QEMU virt models).
  std::string Boot;
  bool PIC = false;
  /// Pointer width of the triple: the largest tensor is 2^AddressBits bytes.
  unsigned AddressBits = 64;
  // Running test images.
  std::string QemuCommand, BaseLinkerScript;
  // Memory.
  int64_t DmaAlign = 64, CacheLine = 64;
  std::vector<std::string> ArenaRegions; ///< In order of preference.
  bool AllowSpill = false; ///< Buffers may overflow into the next region.
  std::string WeightsRegion;
  std::vector<MemoryRegion> Regions;
  /// [perf]: the most multiply-accumulates one core can retire per cycle,
  /// for float32 and for int8 operands (0: not stated). `cuvilc report`
  /// measures a profiled layer's MACs per cycle against them.
  double PeakMacsF32 = 0, PeakMacsInt8 = 0;

  const MemoryRegion *region(const std::string &Name) const;
  /// The regions' names, in file order (messages).
  std::vector<std::string> regionNames() const;
  /// True for the build machine target (no linker script, PIC objects).
  bool isHost() const { return Name == "host"; }
};

/// Directory holding the target TOML files: $CUVIL_TARGETS_DIR, else the
/// one installed next to the tool, else the source tree's targets/.
std::string targetsDir();

/// Parses one target file; errors name the file and the key.
llvm::Expected<TargetInfo> loadTargetFile(const std::string &Path);
/// Every target file of the targets directory: the ones that load (names
/// unique), sorted by name, and one message per file that does not (with
/// its file and line) or whose target name another file also uses (then
/// neither is in Targets). One broken file does not hide the others.
struct TargetScan {
  std::vector<TargetInfo> Targets;
  std::vector<std::string> Problems;
};
/// Fails only when the directory cannot be read.
llvm::Expected<TargetScan> scanTargets();

/// Parses target TOML text already in memory; Path names it in errors.
llvm::Expected<TargetInfo> parseTarget(std::string_view Text,
                                       const std::string &Path);
/// The target named Name. If it is missing, the error is its file's
/// problem (broken, or a name defined twice), else it lists the known ones.
/// A Name ending in ".toml" (or holding a '/') is a target file's path: a
/// board described outside the targets directory.
llvm::Expected<TargetInfo> loadTarget(const std::string &Name);
/// All targets, sorted by name; fails if any target file has a problem.
llvm::Expected<std::vector<TargetInfo>> loadAllTargets();

} // namespace cuvil

#endif
