//===- LowerQdq.cpp - The lower-qdq pass: quantized graphs to integer ops -===//
//
// Finds the quantized convolutions and matrix products of a model and
// gives them to the integer kernels (ops/quant/QInt.h):
//
//   QDQ form, as PyTorch's exporter, ONNX Runtime's quantizer and
//   TensorFlow's converter write it:
//     DQ(x) , DQ(w const) [, DQ(bias int32) | bias f32] -> Conv | Gemm |
//     MatMul [-> Relu | Clip] -> Q
//   with per-tensor activations and per-tensor or per-output-channel
//   weights, uint8 or int8, any zero points;
//   QOperator form: QLinearConv and QLinearMatMul with constant weights,
//   scales and zero points.
//
// The QDQ form of an Add of two same-shaped tensors (a residual
// connection) becomes cuvil.QAdd, that of GlobalAveragePool
// cuvil.QGlobalAveragePool. And between them, ops that only move or
// select values (views, MaxPool,
// GlobalMaxPool, Concat) run on the 8-bit values where their
// DequantizeLinear inputs and QuantizeLinear output share scale and zero
// point, as the quantizers write them.
//
// The DequantizeLinear of the weights then has no use left and goes, so
// weights stay int8 in the blob. What does not match keeps its float (or
// reference QLinear) kernels; the pass never changes what is computed
// beyond the rounding of the requantization (docs/quantization.md).
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "ops/quant/QInt.h"
#include "ops/quant/Quant.h"
#include "passes/Pass.h"

#include <cuvil/kernels.h>

#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace cuvil {

// The internal ops it builds; the ops it reads are recognised by their
// records' traits and Product hooks.
extern const OpDef QAddOp, QGlobalAveragePoolOp;

namespace {

bool isConst(const Value *V) {
  return V && V->isConstant() && !V->data().empty();
}

std::vector<float> floats(const Value *V) {
  std::vector<float> Out(V->numElements());
  std::memcpy(Out.data(), V->data().data(), 4 * Out.size());
  return Out;
}

bool isQ8(DType T) { return T == DType::U8 || T == DType::I8; }

/// A scale and zero point of Count values (1: per tensor), constant, for
/// a tensor of type Type; the zero point may be absent (0).
bool readParams(const Value *Scale, const Value *Zp, DType Type, int64_t Count,
                std::vector<float> &S, std::vector<int32_t> &Z) {
  if (!isConst(Scale) || Scale->dtype() != DType::F32 ||
      Scale->numElements() != Count)
    return false;
  S = floats(Scale);
  for (float V : S)
    if (!(V > 0) || !std::isfinite(V))
      return false;
  Z.clear();
  if (!Zp)
    return true;
  if (!isConst(Zp) || Zp->dtype() != Type || Zp->numElements() != Count)
    return false;
  Z = constantInts(*Zp);
  return true;
}

/// Per-tensor parameters of a uint8/int8 activation.
bool scalarParams(const Value *Scale, const Value *Zp, DType Type, float &S,
                  int32_t &Z) {
  std::vector<float> SV;
  std::vector<int32_t> ZV;
  if (!isQ8(Type) || !readParams(Scale, Zp, Type, 1, SV, ZV))
    return false;
  S = SV[0];
  Z = ZV.empty() ? 0 : ZV[0];
  return true;
}

/// The DequantizeLinear that produces V, or null.
const Node *dequantizer(const Value *V) {
  const Node *P = V ? V->producer() : nullptr;
  return P && P->def() && P->def()->has(Dequantizes) ? P : nullptr;
}

/// V is used by one node only and is not a graph output.
bool singleUse(const Graph &G, const Value *V) {
  return V->users().size() == 1 && !G.isGraphOutput(V);
}

/// The quantized activation behind DQ(x): sets X, XScale, XZp.
bool matchActivation(const Value *V, QuantizedProduct &P) {
  const Node *D = dequantizer(V);
  if (!D)
    return false;
  P.X = D->input(0);
  return scalarParams(D->input(1), D->input(2), P.X->dtype(), P.XScale, P.XZp);
}

/// The constant quantized weight behind DQ(w), per tensor or per channel
/// along Axis (the output-channel axis of w's layout): sets W, WScale, WZp.
bool matchWeight(const Value *V, int64_t Axis, QuantizedProduct &P) {
  const Node *D = dequantizer(V);
  if (!D || !isConst(D->input(0)) || !isQ8(D->input(0)->dtype()))
    return false;
  P.W = D->input(0);
  const int64_t Channels = P.W->shape()[Axis];
  const Value *Scale = D->input(1);
  if (Scale && Scale->numElements() != 1) {
    int64_t DAxis = QdqAttrs(*D).Axis;
    if (DAxis < 0)
      DAxis += P.W->rank();
    if (DAxis != Axis)
      return false;
  }
  return readParams(Scale, D->input(2), P.W->dtype(),
                    Scale && Scale->numElements() != 1 ? Channels : 1, P.WScale,
                    P.WZp);
}

/// A bias of Channels values: float constant, or DQ(int32 constant).
bool matchBias(const Value *B, int64_t Channels, float Beta,
               QuantizedProduct &P) {
  if (!B)
    return true;
  if (B->numElements() != Channels)
    return false;
  if (isConst(B) && B->dtype() == DType::F32) {
    P.BiasF = floats(B);
    for (float &V : P.BiasF)
      V *= Beta;
    return true;
  }
  const Node *D = dequantizer(B);
  if (!D || !isConst(D->input(0)) || D->input(0)->dtype() != DType::I32)
    return false;
  std::vector<int32_t> Zp, Q = constantInts(*D->input(0));
  const Value *Scale = D->input(1);
  if (!readParams(Scale, D->input(2), DType::I32,
                  Scale ? Scale->numElements() : 0, P.BiasScale, Zp) ||
      (P.BiasScale.size() != 1 && int64_t(P.BiasScale.size()) != Channels))
    return false;
  for (int64_t C = 0; C < Channels; ++C) {
    const int32_t Z = Zp.empty() ? 0 : Zp[Zp.size() == 1 ? 0 : C];
    P.BiasQ.push_back(int64_t{Q[C]} - Z);
  }
  if (Beta != 1) {
    for (float &S : P.BiasScale)
      S *= Beta;
  }
  return true;
}

/// When Prod (the producer of V, Q's input) is a Relu or a constant Clip
/// whose result only Q uses, takes its bounds into P's clamp and moves V
/// and Prod one node up. False when its bounds are not known.
bool peelClamp(const Graph &G, const Value *&V, const Node *&Prod,
               QuantizedProduct &P) {
  if (!Prod || !Prod->def() || !Prod->def()->ActivationClamp ||
      !singleUse(G, V))
    return true;
  auto C = Prod->def()->ActivationClamp(*Prod);
  if (!C)
    return false;
  std::tie(P.ClampLo, P.ClampHi) = *C;
  P.Folded.push_back(Prod);
  V = Prod->input(0);
  Prod = V->producer();
  return true;
}

/// The product form of N (OpDef::Product), or nullopt.
std::optional<ProductForm> productForm(const Node &N) {
  return N.def() && N.def()->Product ? N.def()->Product(N) : std::nullopt;
}

/// The integer kernels take 1-d and 2-d convolutions, and matrix products
/// of a 2-d weight with an input of rank 2 or more.
bool kernelTakes(const ProductForm &F, const Value &X, const Value &W) {
  return F.K == ProductForm::Kind::Conv ? W.rank() >= 3 && W.rank() <= 4
                                        : W.rank() == 2 && X.rank() >= 2;
}

/// P's kind and Gemm factors from the product form F.
void setForm(const ProductForm &F, QuantizedProduct &P) {
  const bool Conv = F.K == ProductForm::Kind::Conv;
  P.K = Conv ? QuantizedProduct::Kind::Conv : QuantizedProduct::Kind::Gemm;
  P.WTransposed = !Conv && F.ChannelAxis == 0;
  P.Alpha = F.Alpha;
}

/// Q(y) [<- Relu/Clip] <- a product (OpDef::Product) of DQ operands.
bool matchQdq(const Graph &G, Node &Q, QuantizedProduct &P) {
  const Value *Y = Q.output(0);
  if (!scalarParams(Q.input(1), Q.input(2), Y->dtype(), P.YScale, P.YZp))
    return false;
  P.Anchor = &Q;
  P.Folded.push_back(&Q);
  const Value *V = Q.input(0);
  const Node *Prod = V->producer();
  if (!peelClamp(G, V, Prod, P))
    return false;
  if (!Prod || !singleUse(G, V) || !matchActivation(Prod->input(0), P))
    return false;
  P.Product = Prod;
  P.Folded.push_back(Prod);
  const auto F = productForm(*Prod);
  if (!F || F->QLinear)
    return false;
  const Value *WIn = Prod->input(F->WeightInput);
  if (!WIn || !kernelTakes(*F, *Prod->input(0), *WIn) ||
      !matchWeight(WIn, F->ChannelAxis, P))
    return false;
  setForm(*F, P);
  return F->BiasInput < 0 ||
         matchBias(Prod->input(F->BiasInput), P.W->shape()[F->ChannelAxis],
                   F->Beta, P);
}

/// QLinearConv / QLinearMatMul with constant weights and parameters.
bool matchQLinear(Node &N, const ProductForm &F, QuantizedProduct &P) {
  P.Anchor = &N;
  P.Product = &N;
  P.Folded.push_back(&N);
  P.X = N.input(0);
  const Value *W = N.input(F.WeightInput), *Y = N.output(0);
  if (!scalarParams(N.input(1), N.input(2), P.X->dtype(), P.XScale, P.XZp) ||
      !scalarParams(N.input(6), N.input(7), Y->dtype(), P.YScale, P.YZp) ||
      !isConst(W) || !isQ8(W->dtype()) || !kernelTakes(F, *P.X, *W))
    return false;
  P.W = W;
  setForm(F, P);
  const int64_t Channels = W->shape()[F.ChannelAxis];
  const Value *WScale = N.input(4);
  if (!WScale ||
      !readParams(WScale, N.input(5), W->dtype(),
                  WScale->numElements() == 1 ? 1 : Channels, P.WScale, P.WZp))
    return false;
  if (F.BiasInput < 0 || !N.input(F.BiasInput))
    return true;
  // QLinearConv's bias is int32 of scale x_scale * w_scale, zero point 0.
  const Value *B = N.input(F.BiasInput);
  if (!isConst(B) || B->dtype() != DType::I32 || B->numElements() != Channels)
    return false;
  for (int32_t V : constantInts(*B))
    P.BiasQ.push_back(V);
  for (int64_t C = 0; C < Channels; ++C)
    P.BiasScale.push_back(P.XScale * P.WScale[P.WScale.size() == 1 ? 0 : C]);
  return true;
}

/// Q(op(DQ(x)...)) where op only moves or selects values (a view,
/// MaxPool, GlobalMaxPool, Concat) and every DQ has Q's scale and zero
/// point: op on x itself computes exactly Q's result, in 8 bits. Rebuilds
/// Q as that op; true if it did.
bool keepInteger(Graph &G, Node &Q) {
  float YScale = 0;
  int32_t YZp = 0;
  const DType T = Q.output(0)->dtype();
  const Value *V = Q.input(0);
  const Node *Op = V->producer();
  if (!scalarParams(Q.input(1), Q.input(2), T, YScale, YZp) || !Op ||
      !Op->def() || Op->outputs().size() != 1 || !singleUse(G, V))
    return false;
  const OpDef *D = Op->def();
  const bool All = D->has(ConcatOfInputs);
  if (!D->has(View) && !D->has(SelectsValues))
    return false;
  std::vector<Value *> Inputs(Op->inputs());
  for (size_t I = 0; I < (All ? Inputs.size() : 1); ++I) {
    QuantizedProduct P;
    if (!matchActivation(Inputs[I], P) || P.X->dtype() != T ||
        P.XScale != YScale || P.XZp != YZp)
      return false;
    Inputs[I] = P.X;
  }
  const auto Attrs = Op->attrs();
  Origin Orig = Q.origin();
  Orig.merge(Op->origin());
  Node *N = G.replaceNode(&Q, Op->opType(), D, Inputs);
  for (const auto &[Name, A] : Attrs)
    N->setAttr(Name, A);
  N->setOpset(Op->opset());
  N->origin() = Orig;
  return true;
}

/// Rebuilds Q as the 8-bit op Def reading Inputs, with P's output zero
/// point and clamp and the origins of the nodes P folds.
Node *rebuildQuantizer(Graph &G, Node &Q, const OpDef &Def,
                       std::vector<Value *> Inputs, const QuantizedProduct &P) {
  const DType T = Q.output(0)->dtype();
  Origin Orig = Q.origin();
  for (const Node *F : P.Folded)
    Orig.merge(F->origin());
  Node *N = G.replaceNode(&Q, Def.Name, &Def, std::move(Inputs));
  N->setAttr("y_zero_point", int64_t{P.YZp});
  N->setAttr("y_lo", int64_t{quantizeScalar(P.ClampLo, P.YScale, P.YZp, T)});
  N->setAttr("y_hi", int64_t{quantizeScalar(P.ClampHi, P.YScale, P.YZp, T)});
  N->origin() = Orig;
  return N;
}

/// Q(Add(DQ(a), DQ(b))) [with a Relu/Clip before the Q] where a, b and
/// the result have one shape: rebuilds Q as cuvil.QAdd (on the kernel in
/// int32 lanes if Lanes); true if it did.
bool lowerAdd(Graph &G, Node &Q, bool Lanes) {
  QuantizedProduct P, A, B; // only their activation fields are used
  const DType T = Q.output(0)->dtype();
  if (!scalarParams(Q.input(1), Q.input(2), T, P.YScale, P.YZp))
    return false;
  P.Folded.push_back(&Q);
  const Value *V = Q.input(0);
  const Node *Op = V->producer();
  if (!peelClamp(G, V, Op, P) || !Op || !Op->def() || !Op->def()->has(Sum) ||
      !singleUse(G, V) || !matchActivation(Op->input(0), A) ||
      !matchActivation(Op->input(1), B) ||
      A.X->shape() != Q.output(0)->shape() ||
      B.X->shape() != Q.output(0)->shape())
    return false;
  P.Folded.push_back(Op);
  // One shift for both multipliers, from the larger: CUVIL_QADD_LANES_BITS
  // significant bits, so the sum fits the int32 lanes of
  // cuvil_k_qadd_lanes_s8. The ratios are rounded to 2^-21 of the larger
  // (some 1e-4 LSB on an 8-bit result); the reference kernel computes the
  // same from the same attributes.
  const float MA = A.XScale / P.YScale, MB = B.XScale / P.YScale;
  if (!std::isfinite(MA) || !std::isfinite(MB))
    return false;
  int EA = 0, EB = 0;
  std::frexp(MA, &EA);
  std::frexp(MB, &EB);
  const int64_t Lim = int64_t{1} << CUVIL_QADD_LANES_BITS;
  int Shift = CUVIL_QADD_LANES_BITS - std::max(EA, EB);
  int64_t AMult = 0, BMult = 0;
  for (int Try = 0; Try < 2; ++Try, --Shift) { // once more if one rounds up
    AMult = static_cast<int64_t>(std::nearbyint(std::ldexp(MA, Shift)));
    BMult = static_cast<int64_t>(std::nearbyint(std::ldexp(MB, Shift)));
    if (AMult < Lim && BMult < Lim)
      break;
  }
  if (Shift < 1 || Shift > 62 || AMult >= Lim || BMult >= Lim)
    return false;
  Node *N = rebuildQuantizer(G, Q, QAddOp, {A.X, B.X}, P);
  N->setAttr("a_zero_point", int64_t{A.XZp});
  N->setAttr("b_zero_point", int64_t{B.XZp});
  N->setAttr("a_mult", AMult);
  N->setAttr("b_mult", BMult);
  N->setAttr("shift", int64_t{Shift});
  N->setAttr("lanes", int64_t{Lanes});
  return true;
}

/// Q(GlobalAveragePool(DQ(x))) [with a Relu/Clip before the Q]: rebuilds
/// Q as cuvil.QGlobalAveragePool; true if it did.
bool lowerGlobalAveragePool(Graph &G, Node &Q) {
  QuantizedProduct P, X; // only their activation fields are used
  const DType T = Q.output(0)->dtype();
  if (!scalarParams(Q.input(1), Q.input(2), T, P.YScale, P.YZp))
    return false;
  P.Folded.push_back(&Q);
  const Value *V = Q.input(0);
  const Node *Op = V->producer();
  if (!peelClamp(G, V, Op, P) || !Op || !Op->def() ||
      !Op->def()->has(GlobalMean) || !singleUse(G, V) ||
      !matchActivation(Op->input(0), X) || X.X->rank() < 3 ||
      Q.output(0)->numElements() == 0)
    return false;
  P.Folded.push_back(Op);
  const int64_t Plane = X.X->numElements() / Q.output(0)->numElements();
  auto M =
      fixedPointMultiplier(X.XScale / (P.YScale * static_cast<float>(Plane)));
  if (Plane >= (1 << 23) || !M)
    return false;
  Node *N = rebuildQuantizer(G, Q, QGlobalAveragePoolOp, {X.X}, P);
  N->setAttr("x_zero_point", int64_t{X.XZp});
  N->setAttr("mult", int64_t{M->first});
  N->setAttr("shift", int64_t{M->second});
  return true;
}

} // namespace

llvm::Error lowerQdq(Graph &G, const PipelineOptions &O) {
  QPacking Pk;
  if (O.QPackMr > 0 && O.QPackKr > 0)
    Pk = {.Mr = O.QPackMr,
          .Kr = O.QPackKr,
          .Packed = true,
          .Direct = O.QPackDirect && O.QPackKr == 4,
          .Shares = std::max<int64_t>(O.Cores, 1),
          .XUnsigned = O.QPackXUnsigned};
  // The quantizers that end a QDQ pattern, and the QOperator products.
  std::vector<Node *> Candidates;
  for (const auto &N : G.nodes()) {
    const OpDef *D = N->def();
    if (D && (D->has(Quantizes) ||
              (D->Product && D->Product(*N).value_or(ProductForm{}).QLinear)))
      Candidates.push_back(N.get());
  }
  bool Changed = false;
  for (Node *N : Candidates) {
    QuantizedProduct P;
    const bool IsQ = N->def()->has(Quantizes);
    const bool Found =
        IsQ ? matchQdq(G, *N, P) : matchQLinear(*N, *productForm(*N), P);
    if (!Found) {
      if (IsQ && (keepInteger(G, *N) || lowerAdd(G, *N, O.QLanes) ||
                  lowerGlobalAveragePool(G, *N)))
        Changed = true;
      continue;
    }
    std::string WhyNot;
    const std::string Name = P.Product->name(), Op = P.Product->opType();
    if (buildQuantizedProduct(G, P, Pk, WhyNot))
      Changed = true;
    else // the user asked for an integer model: say where it is not one
      llvm::errs() << "note: node '" << Name << "' (" << Op
                   << ") stays off the integer fast path: " << WhyNot << "\n";
  }
  if (!Changed)
    return llvm::Error::success();
  return eliminateDeadCode(G);
}

} // namespace cuvil
