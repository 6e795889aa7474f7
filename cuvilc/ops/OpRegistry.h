//===- OpRegistry.h - Per-operator definitions ------------------*- C++ -*-===//
//
// Each supported ONNX operator has one OpDef (in its own file under ops/),
// listed in Ops.def. The pipeline never switches on op names: it asks the
// OpDef to verify a node, to lower it to kernel calls, and for its traits.
// Lowering produces plain data (KernelCall, in lowering/), which the driver
// hands to codegen (see lowerGraph): ops do not depend on LLVM IR, and
// codegen does not call the registry (it reads the calls only).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_OPREGISTRY_H
#define CUVIL_OPS_OPREGISTRY_H

#include "ir/Graph.h"
#include "lowering/KernelCall.h"

#include <llvm/Support/Error.h>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

/// How the memory planner may place an op's output.
enum class Placement : uint8_t {
  Fresh,   ///< Output needs its own buffer.
  InPlace, ///< Output may reuse input 0's buffer (element-wise).
  View,    ///< Output is input 0's buffer reinterpreted (no kernel at all).
};

struct OpDef {
  const char *Name;
  /// Rejects what cuvil cannot compile (attributes, dtypes, ranks), with the
  /// reason; also checks what shape inference left unknown.
  llvm::Error (*Verify)(const Node &N);
  /// Appends the kernel calls that compute the node. Null for View ops.
  llvm::Error (*Lower)(const Node &N, std::vector<KernelCall> &Calls);
  /// Multiply-accumulates of one execution (0 for data movement).
  int64_t (*Macs)(const Node &N);
  Placement Place;
  /// Bit P set: output position P always exists. When the model leaves that
  /// optional output out (or the op has fewer outputs: then it is pure
  /// workspace), the importer materialises it as an internal value of input
  /// 0's dtype whose shape the op's shape rule gives; the planner allocates
  /// it like any other output. Ops use it as scratch memory (e.g. LSTM's
  /// cell state when Y_c is not wanted).
  uint32_t ScratchOutputs = 0;
  /// Rewrites N's constant weights into the order of the target's packed
  /// kernel, Panel output channels per panel, and marks N `cuvil.packed`
  /// (see ops/Packing.h); null for ops without a packed kernel.
  void (*PackWeights)(Graph &G, Node &N, int64_t Panel) = nullptr;
};

/// The definition of OpType, or null when cuvil does not support it.
const OpDef *lookupOp(std::string_view OpType);
/// Names of all supported ops, sorted.
std::vector<std::string_view> supportedOps();

// Shared helpers for op definitions.
int64_t noMacs(const Node &N);
/// Requires every input and output that is present to be float32.
llvm::Error requireF32(const Node &N);
/// Clamp bounds of an activation fused into N by the fusion pass
/// (attributes cuvil.act_lo / cuvil.act_hi; +-infinity when none).
std::pair<float, float> fusedActivation(const Node &N);
/// Clip's clamp bounds, from its constant inputs or (opset < 11) attributes.
llvm::Expected<std::pair<float, float>> clipBounds(const Node &N);
/// True when Dropout N provably keeps every element (no training_mode, a
/// constant false one, or a constant ratio of 0): its output is a view.
bool dropoutIsIdentity(const Node &N);
/// A Transpose's permutation: its perm attribute, or the reversal of the
/// input's axes (the ONNX default).
std::vector<int64_t> transposePerm(const Node &N);
/// Normalises a possibly negative axis for a tensor of the given rank.
llvm::Expected<int64_t> normalizeAxis(const Node &N, int64_t Axis, size_t Rank);

} // namespace cuvil

#endif
