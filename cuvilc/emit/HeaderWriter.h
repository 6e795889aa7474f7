//===- HeaderWriter.h - The model's C header --------------------*- C++ -*-===//
#ifndef CUVIL_EMIT_HEADERWRITER_H
#define CUVIL_EMIT_HEADERWRITER_H

#include "ir/Escape.h"
#include "ir/Graph.h"
#include "lowering/KernelCall.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cuvil {

/// The worst-case stack depth of one entry point, if it has a sound bound.
struct StackFigure {
  bool Known = false;
  uint64_t Bytes = 0;            ///< When Known.
  std::string Reason;            ///< When not: why.
  std::vector<std::string> Path; ///< Deepest call chain, entry point first.
};

struct HeaderInfo {
  std::string ModelName;      ///< C prefix.
  std::string SourceFile;     ///< The ONNX file's base name (for the comment).
  uint64_t BlobSize = 0;      ///< 0 for external weights.
  uint64_t StructureHash = 0; ///< What a blob must match (WeightsBlob.h).
  bool ExternalWeights = false;
  /// Per graph input: false if the model never reads it (empty: all read).
  std::vector<bool> InputsRead;
  /// Per graph input: true if the caller may leave it out (NULL; an ONNX
  /// optional input the graph tests, ops/sequence/Optional.h).
  std::vector<bool> InputsOptional;
  /// Loops unrolled to the user's bound (--loop-bound): name and bound.
  /// run returns CUVIL_ERR_LOOP_BOUND when one would run more.
  std::vector<std::pair<std::string, int64_t>> LoopBounds;
  /// Built with --sign-key: the blob carries an HMAC-SHA-256 tag.
  bool WeightsSigned = false;
  /// Stack depth of init and of run/run_v (in the emitted code).
  StackFigure InitStack, RunStack;
  /// Built with --checked: the struct records the failing step, and
  /// cuvil_<name>_step_name() names it.
  bool Checked = false;
  /// --cores: the shares each split layer has (cuvil/team.h).
  int64_t Workers = 1;
  /// Built with --profile: the table's rows (IR node names; the last may
  /// be the output copies), the ONNX nodes of each, what its two columns
  /// count, and where profile_runs sits in cuvil_<name>_t.
  struct Profile {
    std::vector<std::string> Steps;
    std::vector<std::vector<std::string>> Origins;
    std::array<std::string, 2> Counters;
    uint64_t Offset = 0;
  };
  std::optional<Profile> Profiled;
  /// Prototypes of the kernels the firmware provides (--custom-ops), in
  /// the order the model first calls them.
  std::vector<std::string> FirmwareKernels;
  /// sizeof(cuvil_<name>_t) on the target (0 when no code was generated).
  uint64_t ContextBytes = 0;
  /// SHA-256 of the built weights' data, in hex.
  std::string WeightsSha256;
  /// A build for a range of a dimension (--dim NAME=LO..HI): its bounds,
  /// and each input's and output's dimensions as C-like text ("seq",
  /// "2*seq", "64").
  struct DimRange {
    std::string Name;
    int64_t Lo = 0, Hi = 0;
    std::vector<std::vector<std::string>> InputDims, OutputDims;
  };
  std::optional<DimRange> Range;
  /// Outputs whose shape the branch of an If picks at run time: the struct
  /// records the branch, output_shape/output_bytes give the shape.
  std::vector<BranchShapedOutput> ShapedOutputs;
};

/// The C API of one compiled model: sizes, shapes, the state struct and
/// the init/run entry points. Deterministic for the same inputs.
std::string writeHeader(const Graph &G, const MemoryPlan &Plan,
                        const TargetInfo &T, const HeaderInfo &Info);

} // namespace cuvil

#endif
