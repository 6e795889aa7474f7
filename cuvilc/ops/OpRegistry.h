//===- OpRegistry.h - Per-operator definitions ------------------*- C++ -*-===//
//
// Each supported ONNX operator has one record, an OpDef, defined in its own
// file under ops/<family>/ and listed once in Ops.def. The record holds
// everything the compiler knows about the op:
//   - Verify, Lower, Macs: what cuvil accepts, the kernel calls, the cost;
//   - Traits (OpTrait bits: ElementWise, InPlace, View, Commutative,
//     ConcatOfInputs): what the passes and the memory planner may assume;
//     the planner's Placement is derived from them (OpDef::place);
//   - Shape: output shapes ONNX shape inference left unknown (driven by
//     passes/ShapeResolution.cpp);
//   - Fold, FoldShapeOnly: compile-time evaluation (driven by
//     passes/ConstantFold.cpp, on the HostTensors of ops/HostTensor.h);
//   - Attrs: the attributes it reads, declared once with their kinds
//     (ops/Attrs.h), checked at import;
//   - ScratchOutputs, PackWeights: workspace outputs, packed kernels.
// Passes and the planner never compare op names (tests/lint checks it):
// they ask the record. Lowering produces plain data (KernelCall), so ops do
// not depend on LLVM IR. docs/ops.md says how to add an op.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_OPREGISTRY_H
#define CUVIL_OPS_OPREGISTRY_H

#include "ir/Graph.h"

#include <llvm/Support/Error.h>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

/// One argument of a kernel call.
struct KernelArg {
  enum class Kind : uint8_t {
    Tensor,   ///< Pointer to a tensor's buffer (+ ByteOffset).
    Null,     ///< A null pointer (an absent optional operand).
    Int,      ///< int64_t scalar.
    Float,    ///< float scalar.
    IntArray, ///< Pointer to a constant int64_t array.
  };
  Kind K = Kind::Null;
  const Value *V = nullptr;
  int64_t ByteOffset = 0;
  int64_t I = 0;
  float F = 0;
  std::vector<int64_t> Array;

  static KernelArg tensor(const Value *V, int64_t ByteOffset = 0) {
    KernelArg A;
    A.K = Kind::Tensor;
    A.V = V;
    A.ByteOffset = ByteOffset;
    return A;
  }
  static KernelArg null() { return KernelArg(); }
  static KernelArg i(int64_t X) {
    KernelArg A;
    A.K = Kind::Int;
    A.I = X;
    return A;
  }
  static KernelArg f(float X) {
    KernelArg A;
    A.K = Kind::Float;
    A.F = X;
    return A;
  }
  static KernelArg array(std::vector<int64_t> X) {
    KernelArg A;
    A.K = Kind::IntArray;
    A.Array = std::move(X);
    return A;
  }
};

/// A call of runtime kernel `Kernel` (a cuvil_k_* function) with Args.
struct KernelCall {
  std::string Kernel;
  std::vector<KernelArg> Args;
  /// Args 0 and 1 are the source and destination tensors of a pure copy:
  /// codegen drops the call when the planner put both at the same bytes.
  bool IsCopy = false;
};

/// What the passes and the planner may assume about an op: bits of
/// OpDef::Traits. They ask these instead of comparing op names.
enum OpTrait : uint32_t {
  NoTraits = 0,
  /// Output element i depends only on the inputs' elements at i (after
  /// numpy broadcasting): unary math, activations, binary arithmetic.
  ElementWise = 1u << 0,
  /// The output may reuse input 0's buffer when both have the same byte
  /// size: the kernel reads each element (or block) before writing it.
  InPlace = 1u << 1,
  /// The output is input 0's bytes reinterpreted: no kernel at all.
  View = 1u << 2,
  /// Inputs 0 and 1 may be swapped without changing the result.
  Commutative = 1u << 3,
  /// The output is its inputs laid one after the other along the axis
  /// attribute: the planner may let each producer write its slice.
  ConcatOfInputs = 1u << 4,
};

/// How the memory planner may place an op's output (derived from traits).
enum class Placement : uint8_t {
  Fresh,   ///< Output needs its own buffer.
  InPlace, ///< Output may reuse input 0's buffer (element-wise).
  View,    ///< Output is input 0's buffer reinterpreted (no kernel at all).
};

/// The output shapes of a node whose inputs have static shapes, one per
/// output in outputs() order.
using ShapeList = std::vector<std::vector<int64_t>>;
using ShapeFn = llvm::Expected<ShapeList> (*)(const Node &N);

struct HostTensor;
/// Inputs of a fold: null for an absent optional input.
using HostInputs = std::vector<const HostTensor *>;
/// Computes the outputs of N on the host (their Ty is preset from the
/// node's outputs). Returns false when the node cannot be evaluated at
/// compile time (it stays), an error when the operands are invalid.
using FoldFn = llvm::Expected<bool> (*)(const Node &N, const HostInputs &In,
                                        std::vector<HostTensor> &Out);

struct AttrSpec;

struct OpDef {
  const char *Name;
  /// Rejects what cuvil cannot compile (attributes, dtypes, ranks), with the
  /// reason; also checks what shape inference left unknown.
  llvm::Error (*Verify)(const Node &N);
  /// Appends the kernel calls that compute the node. Null for View ops.
  llvm::Error (*Lower)(const Node &N, std::vector<KernelCall> &Calls);
  /// Multiply-accumulates of one execution (0 for data movement).
  int64_t (*Macs)(const Node &N);
  /// OpTrait bits.
  uint32_t Traits;
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
  /// The output shapes from static input shapes (and constant operands),
  /// for what ONNX shape inference left unknown; null: none computed here.
  ShapeFn Shape = nullptr;
  /// Compile-time evaluation (fold-constants); null: never folded.
  FoldFn Fold = nullptr;
  /// Fold needs only input 0's static shape, not its data (Shape, Size).
  bool FoldShapeOnly = false;
  /// The attributes the op reads, with their kinds, ended by a null name;
  /// null when not declared yet (see ops/Attrs.h).
  const AttrSpec *Attrs = nullptr;

  bool has(OpTrait T) const { return (Traits & T) != 0; }
  Placement place() const {
    return has(View)      ? Placement::View
           : has(InPlace) ? Placement::InPlace
                          : Placement::Fresh;
  }
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
