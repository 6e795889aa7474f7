//===- OpRegistry.h - Per-operator definitions ------------------*- C++ -*-===//
//
// Each supported ONNX operator has one record, an OpDef, defined in its own
// file under ops/<family>/ and listed once in Ops.def; so has each internal
// op (domain "cuvil", listed in InternalOps.def), the fused and lowered
// forms the passes rebuild nodes as. The record holds everything the
// compiler knows about the op:
//   - Verify, Lower, Macs: what cuvil accepts, the kernel calls, the cost;
//   - Traits (OpTrait bits: ElementWise, InPlace, View, Commutative,
//     ConcatOfInputs, Sum, Permutes, SelectsValues, GlobalMean,
//     Quantizes, Dequantizes): what the passes and the memory planner may
//     assume; the planner's Placement is derived from them (OpDef::place);
//   - the fusion hooks (ActivationClamp, WithClamp, TakesResidual,
//     ChannelAffine, FoldChannelAffine, PackWeights, Product, Specialize,
//     Rewrite):
//     what the rewriting passes may do, and into which internal op;
//   - Shape: output shapes ONNX shape inference left unknown (driven by
//     passes/ShapeResolution.cpp);
//   - Fold, FoldShapeOnly: compile-time evaluation (driven by
//     passes/ConstantFold.cpp, on the HostTensors of ops/HostTensor.h);
//   - Attrs: the attributes it reads, declared once with their kinds
//     (ops/Attrs.h), checked at import;
//   - ScratchOutputs: workspace outputs.
// Passes and the planner never compare op names or records (tests/lint
// checks it): they ask the record's traits and hooks. They may create
// nodes of a given record (a pass that rebuilds a node as an internal op).
// Lowering produces plain data (KernelCall, in lowering/), which the driver
// hands to codegen (see lowerGraph): ops do not depend on LLVM IR, and codegen
// does not call the registry (it reads the calls only). docs/ops.md says how to
// add an op.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_OPREGISTRY_H
#define CUVIL_OPS_OPREGISTRY_H

#include "ir/Graph.h"
#include "lowering/KernelCall.h"

#include <llvm/Support/Error.h>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

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
  /// y = a + b, element-wise with broadcasting: the fuse-residual pass
  /// gives one operand to the producer of the other, lower-qdq makes a
  /// same-shape one an 8-bit add.
  Sum = 1u << 5,
  /// y is input 0 with its axes permuted (transposePerm): the
  /// eliminate-transposes pass composes and removes them.
  Permutes = 1u << 6,
  /// Every output element is a copy of an input element (pooling by
  /// maximum, concatenation): the op commutes with any monotonic
  /// per-tensor map, so lower-qdq runs it on 8-bit values.
  SelectsValues = 1u << 7,
  /// y[n, c] = mean of x[n, c, ...] over the other axes.
  GlobalMean = 1u << 8,
  /// QuantizeLinear: y = saturate(round(x / scale) + zero_point).
  Quantizes = 1u << 9,
  /// DequantizeLinear: y = (x - zero_point) * scale.
  Dequantizes = 1u << 10,
};

/// What a node computes as a product with a weight operand, for the passes
/// that rewrite such products (lower-qdq): OpDef::Product gives it.
struct ProductForm {
  /// Conv: a convolution, weights [M, C/group, k...]; Gemm: a matrix
  /// product y = x . w over the last axis of x.
  enum class Kind : uint8_t { Conv, Gemm } K = Kind::Gemm;
  /// The input holding the weights.
  int WeightInput = 1;
  /// The weights' axis of output channels (columns).
  int ChannelAxis = 0;
  /// The input holding a bias of one value per output channel; -1: none.
  int BiasInput = -1;
  /// y = Alpha * (x . w) + Beta * bias (Gemm's attributes; 1 otherwise).
  float Alpha = 1, Beta = 1;
  /// The QOperator form (QLinearConv, QLinearMatMul): the inputs are x,
  /// x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
  /// y_zero_point[, bias] and the output is already quantized.
  bool QLinear = false;
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

/// One way an op that runs one of several subgraphs can go (If's then and
/// else branches): the condition's value that takes it, and the node's
/// inputs holding that subgraph's results, one per output of the node.
struct BranchArm {
  bool When;
  std::vector<Value *> Results;
};
/// A branching node's condition (a bool scalar input) and its arms.
struct BranchChoice {
  Value *Cond;
  std::vector<BranchArm> Arms;
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
  /// kernel, Panel output channels per panel, and rebuilds N as the
  /// internal op of that kernel (cuvil.PackedConv, ...; see
  /// ops/nn/Packing.h). Returns the new node, or null when N keeps its form;
  /// null for ops without a packed kernel.
  Node *(*PackWeights)(Graph &G, Node &N, int64_t Panel) = nullptr;
  /// For an activation that is a clamp of its input 0 (Relu, Clip with
  /// constant bounds): the bounds [lo, hi]; nullopt when this node's are not
  /// known at compile time. Null for other ops.
  std::optional<std::pair<float, float>> (*ActivationClamp)(const Node &N) =
      nullptr;
  /// The op that computes this one followed by a clamp in the kernel's
  /// epilogue (the op itself when it has that epilogue already); null when
  /// the op's kernel has none. The fuse-activations pass rebuilds a node as
  /// it and sets its clamp attributes (see setFusedActivation).
  const OpDef *WithClamp = nullptr;
  /// The kernel adds input 3, shaped like the output, to each result before
  /// the clamp epilogue (the fuse-residual pass puts there the other operand
  /// of an Add of the result).
  bool TakesResidual = false;
  /// For an op that computes y = x * Scale[c] + Shift[c] per channel c of
  /// input 0 (axis 1) with constants known at compile time (inference
  /// BatchNormalization): gives them and returns true; false when this
  /// node's parameters are not constant. Null for other ops.
  bool (*ChannelAffine)(const Node &N, std::vector<float> &Scale,
                        std::vector<float> &Shift) = nullptr;
  /// Folds a per-output-channel affine of N's result (y * Scale[c] +
  /// Shift[c]) into N's constant weights and bias; false (N unchanged) when
  /// N's form does not allow it. Null for ops that cannot absorb one.
  bool (*FoldChannelAffine)(Graph &G, Node &N, const std::vector<float> &Scale,
                            const std::vector<float> &Shift) = nullptr;
  /// For an op that computes a product with a weight operand: its form, or
  /// nullopt when this node's attributes leave that form (e.g. a Gemm with
  /// transA, or whose C is not one value per column). Null for other ops.
  std::optional<ProductForm> (*Product)(const Node &N) = nullptr;
  /// The record N must be rebuilt as once constants are folded, when what
  /// it computes rules out its own kernel (a Dropout whose training_mode
  /// arrives at run time cannot be a view); null to keep it. Applied by
  /// the specialize-ops pass. Null for ops with one form.
  const OpDef *(*Specialize)(const Node &N) = nullptr;
  /// Replaces the pattern of nodes rooted at N with a cheaper form (the
  /// exact GELU written with Erf becomes one Gelu; a MatMul by a constant
  /// matrix a Gemm of rows) and returns the node that now computes the
  /// pattern's result, or null when N's neighbourhood is not the pattern.
  /// It may erase N and nodes whose records have no Rewrite, and append new
  /// nodes anywhere (the rewrite-patterns pass restores the order). Null
  /// for ops that root no pattern.
  Node *(*Rewrite)(Graph &G, Node &N) = nullptr;
  /// Multicore builds (--cores): cuts the work of Calls (N's lowering)
  /// into at most Parts shares that run at once on different cores, each
  /// a list of calls that writes its own part of the outputs and nothing
  /// another share reads; appends them to Shares. Appends nothing when N
  /// does not split (a batch above 1, a single panel). Null: never split.
  void (*Split)(const Node &N, const std::vector<KernelCall> &Calls,
                int64_t Parts,
                std::vector<std::vector<KernelCall>> &Shares) = nullptr;
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
  /// For an op that runs one of several inlined subgraphs chosen by a
  /// condition (If): the condition and the arms; nullopt when N's branches
  /// are malformed (Verify says why). fold-constants replaces a node whose
  /// condition is known by the taken arm's results; lowering makes the
  /// nodes only one arm needs run only when that arm is taken. Null for
  /// other ops.
  std::optional<BranchChoice> (*Branches)(const Node &N) = nullptr;
  /// For an op whose code may stop the run (cuvil.LoopBound): when and
  /// with which status; nullopt when this node never does. Null for other
  /// ops.
  std::optional<RunExit> (*Exit)(const Node &N) = nullptr;

  bool has(OpTrait T) const { return (Traits & T) != 0; }
  Placement place() const {
    return has(View)      ? Placement::View
           : has(InPlace) ? Placement::InPlace
                          : Placement::Fresh;
  }
};

/// The domain of cuvil's internal ops: the fused and lowered forms the
/// passes create (cuvil.PackedConv, ...; listed in ops/InternalOps.def).
/// A model may not use it.
inline constexpr std::string_view InternalDomain = "cuvil";

/// The definition of OpType, or null when cuvil does not support it.
const OpDef *lookupOp(std::string_view OpType);
/// Names of all supported ops, sorted.
std::vector<std::string_view> supportedOps();
/// The internal op Name (without the "cuvil." prefix), or null.
const OpDef *lookupInternalOp(std::string_view Name);
/// Names of the internal ops (without the prefix), sorted.
std::vector<std::string_view> internalOps();
/// The op OpType of Domain: ONNX's ("" or "ai.onnx") or cuvil's internal
/// ones ("cuvil"); null for any other domain (custom ops have their own
/// registry). The textual IR's reader resolves operators with it.
const OpDef *lookupOpInDomain(std::string_view Domain, std::string_view OpType);

/// Rebuilds N as an op of Def (an internal op, whose name it takes) in N's
/// place: same inputs, outputs, attributes and ONNX origin. N is erased.
Node *rebuildAs(Graph &G, Node &N, const OpDef &Def);

// Shared helpers for op definitions.
int64_t noMacs(const Node &N);
/// Requires every input and output that is present to be float32.
llvm::Error requireF32(const Node &N);
/// The float attributes of the internal ops with a clamp epilogue
/// (OpDef::WithClamp): y = min(max(y, clamp_lo), clamp_hi).
inline constexpr const char *ClampLoAttr = "clamp_lo";
inline constexpr const char *ClampHiAttr = "clamp_hi";
/// Clamp bounds of an activation fused into N by the fusion pass
/// (attributes clamp_lo / clamp_hi; +-infinity when none).
std::pair<float, float> fusedActivation(const Node &N);
/// No clamp: [-inf, inf] (the epilogue of ops without a fused activation).
std::pair<float, float> noClamp();
/// Whether N has a fused clamp (either bound).
bool hasFusedActivation(const Node &N);
/// Sets N's clamp attributes to [Lo, Hi].
void setFusedActivation(Node &N, std::pair<float, float> Bounds);
/// Clip's clamp bounds, from its constant inputs or (opset < 11) attributes.
llvm::Expected<std::pair<float, float>> clipBounds(const Node &N);
/// True when Dropout N provably keeps every element (no training_mode, a
/// constant false one, or a constant ratio of 0): its output is a view.
bool dropoutIsIdentity(const Node &N);
/// The axis attribute of an op with the ConcatOfInputs trait, as written
/// (possibly negative).
int64_t concatAxis(const Node &N);
/// A Transpose's permutation: its perm attribute, or the reversal of the
/// input's axes (the ONNX default).
std::vector<int64_t> transposePerm(const Node &N);
/// Normalises a possibly negative axis for a tensor of the given rank.
llvm::Expected<int64_t> normalizeAxis(const Node &N, int64_t Axis, size_t Rank);

} // namespace cuvil

#endif
