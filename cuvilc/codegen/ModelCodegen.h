//===- ModelCodegen.h - IR + memory plan -> object file ---------*- C++ -*-===//
#ifndef CUVIL_CODEGEN_MODELCODEGEN_H
#define CUVIL_CODEGEN_MODELCODEGEN_H

#include "codegen/ProfileCode.h"
#include "codegen/StackUsage.h"
#include "ir/Graph.h"
#include "ir/StageTimer.h"
#include "lowering/KernelCall.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <cuvil/status.h>
#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/Error.h>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// A kernel the firmware provides (the kernel of a --custom-ops op): the
/// module declares it with this C signature and never defines it, so it is
/// an undefined symbol of the object.
struct FirmwareKernel {
  enum class Param : uint8_t { Pointer, Int64, Float };
  std::string Name;
  std::vector<Param> Params;
};

/// A build for a range of one dimension (`--dim seq=LO..HI`, see
/// driver/DimRange.h): the kernel arguments that vary carry their formulas
/// (KernelArg::Dyn); these are the other integers of the entry points that
/// depend on the dimension. The instance holds the value for the next run
/// (`int64_t dims[1]`, set by cuvil_<name>_set_dims), and run checks it.
struct DimRangeCode {
  std::string Name;
  int64_t Lo = 0, Hi = 0;
  /// Per graph input and output: each dimension, and the byte size.
  std::vector<std::vector<DimFormula>> InputShapes, OutputShapes;
  std::vector<DimFormula> InputBytes, OutputBytes;
  /// Per entry of MemoryPlan::OutputCopies: the bytes copied.
  std::vector<DimFormula> CopyBytes;
};

struct CodegenOptions {
  std::string ModelName;      ///< C symbol prefix.
  uint64_t StructureHash = 0; ///< Must match the weight blob's.
  uint64_t WeightsDataSize = 0;
  /// The FlatBuffers weight blob to embed (not copied: it must outlive
  /// generateObject); empty for external weights.
  llvm::ArrayRef<uint8_t> EmbeddedBlob;
  bool WantLLVMIR = false, WantAsm = false;
  /// --checked: canaries in the plan's guard gaps checked after every
  /// step, operands checked against their regions (see CheckedCode.h).
  bool Checked = false;
  /// --profile: counters read after every step into a table in the model
  /// struct (see ProfileCode.h).
  bool Profile = false;
  /// Each arena's size as an absolute symbol cuvil_<model>_arena_<r>_bytes,
  /// which a system plan's fragment checks (cuvilc link-plan). Off for the
  /// in-process runner: ORC's JIT linker does not define absolute symbols.
  bool ArenaSizeSymbols = true;
  /// Kernels lowering may call that the kernel library does not define.
  std::vector<FirmwareKernel> FirmwareKernels;
  /// Processes that optimise the steps (SplitOptimize.h); 0: one per core
  /// this process may use, at most 8. The object is the same either way.
  unsigned Jobs = 0;
  /// Times the LLVM stages (-v, --time-passes); null: not timed.
  StageTimer *Timer = nullptr;
  /// A build for a range of a dimension; empty for fixed dimensions.
  std::optional<DimRangeCode> Range;
  /// Graph outputs whose shape the branch of an If picks at run time: the
  /// instance records the branch (output_arm), cuvil_<name>_output_shape
  /// and _output_bytes give the shape after a run. Not with Range.
  std::vector<BranchShapedOutput> ShapedOutputs;
};

struct CodegenResult {
  std::string Object;
  std::string LLVMIR; ///< Optimised module text, if requested.
  std::string Asm;    ///< Target assembly, if requested.
  /// Per graph input: whether any kernel reads it. An input only consulted
  /// for its type (CastLike's `like`) or used by no node is not read.
  std::vector<bool> InputsRead;
  /// Worst-case stack depth of init, and of run (which covers run_v), in
  /// the emitted code.
  StackBound InitStack, RunStack;
  /// sizeof(cuvil_<name>_t) on the target: what a caller that cannot read
  /// the header (the Python package) allocates for one instance.
  uint64_t ContextBytes = 0;
  /// --profile: the table's rows, and the byte offset of profile_runs in
  /// cuvil_<name>_t (the table follows it).
  std::vector<ProfileStep> ProfileSteps;
  uint64_t ProfileOffset = 0;
};

/// Builds the model's entry points (init / run / run_v) calling the kernels
/// of each node's lowering L (see lowerGraph in ops/LowerGraph.h), links the
/// target's kernel bitcode, internalises, optimises for the target and emits
/// an ELF relocatable object.
llvm::Expected<CodegenResult>
generateObject(const Graph &G, const GraphLowering &L, const MemoryPlan &Plan,
               const TargetInfo &T, const CodegenOptions &Opts);

/// Status codes returned by the generated entry points: those of
/// runtime-baremetal/include/cuvil/status.h (their only definition; the
/// generated header copies them from there too).
enum StatusCode : int {
  StatusOk = CUVIL_OK,
  StatusNullArgument = CUVIL_ERR_NULL,
  StatusArenaMisaligned = CUVIL_ERR_ARENA_ALIGN,
  StatusNoWeights = CUVIL_ERR_NO_WEIGHTS,
  StatusNotInitialized = CUVIL_ERR_NOT_INIT,
  StatusArenaOverlap = CUVIL_ERR_ARENA_OVERLAP,
  StatusArenaRange = CUVIL_ERR_ARENA_RANGE,
  StatusBounds = CUVIL_ERR_BOUNDS,
  StatusDimRange = CUVIL_ERR_DIM_RANGE,
  StatusLoopBound = CUVIL_ERR_LOOP_BOUND,
  StatusIndex = CUVIL_ERR_INDEX,
  StatusBlobAlign = CUVIL_ERR_BLOB_ALIGN,
  StatusBlobShort = CUVIL_ERR_BLOB_SHORT,
};

} // namespace cuvil

#endif
