//===- Softmax.cpp - Softmax, LogSoftmax, Hardmax, cuvil.ScaledSoftmax ----===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/PatternMatch.h"
#include "ops/ShapeRules.h"

#include <cmath>

namespace cuvil {

extern const OpDef ScaledSoftmaxOp;

namespace {

// The default axis depends on the opset (see extents): -1 here is that of
// opset >= 13, the older one is taken when the attribute is absent.
#define SOFTMAX_ATTRS(X) X(Axis, "axis", Int, -1)
CUVIL_OP_ATTRS(SoftmaxAttrs, SOFTMAX_ATTRS)
// cuvil.ScaledSoftmax: Softmax's axis (read by extents(), with the
// Softmax's opset) and the factor its input is scaled by.
#define SCALED_SOFTMAX_ATTRS(X)                                                \
  X(Axis, "axis", Int, -1) X(Scale, "scale", Float, 1.0f)
CUVIL_OP_ATTRS(ScaledSoftmaxAttrs, SCALED_SOFTMAX_ATTRS)

struct Extents {
  int64_t Outer, N, Inner;
};

// Opset >= 13 normalises along one axis (default -1). Older opsets flatten
// the input to 2-D at `axis` (default 1) and normalise each row.
llvm::Expected<Extents> extents(const Node &Nd) {
  const Value *X = Nd.input(0);
  bool Coerce2D = Nd.opset() < 13;
  int64_t Given = Coerce2D && !Nd.hasAttr("axis") ? 1 : SoftmaxAttrs(Nd).Axis;
  auto Axis = normalizeAxis(Nd, Given, X->rank());
  if (!Axis)
    return Axis.takeError();
  Extents E{1, 1, 1};
  for (int64_t D = 0; D < static_cast<int64_t>(X->rank()); ++D) {
    int64_t Dim = X->shape()[D];
    if (D < *Axis)
      E.Outer *= Dim;
    else if (D == *Axis || Coerce2D)
      E.N *= Dim;
    else
      E.Inner *= Dim;
  }
  return E;
}

llvm::Error verifySoftmaxOp(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  return extents(N).takeError();
}

template <const char *Kernel>
llvm::Error lowerSoftmaxOp(const Node &N, std::vector<KernelCall> &Calls) {
  auto E = extents(N);
  if (!E)
    return E.takeError();
  Calls.push_back(kabi::XYOuterNInnerGroup{.Kernel = Kernel,
                                           .x = N.input(0),
                                           .y = N.output(0),
                                           .outer = E->Outer,
                                           .n = E->N,
                                           .inner = E->Inner}
                      .call());
  return llvm::Error::success();
}

llvm::Error lowerScaled(const Node &N, std::vector<KernelCall> &Calls) {
  auto E = extents(N);
  if (!E)
    return E.takeError();
  Calls.push_back(kabi::SoftmaxScaledF32{.x = N.input(0),
                                         .y = N.output(0),
                                         .outer = E->Outer,
                                         .n = E->N,
                                         .inner = E->Inner,
                                         .scale = ScaledSoftmaxAttrs(N).Scale}
                      .call());
  return llvm::Error::success();
}

/// Softmax's Rewrite hook: Softmax(Mul(x, s)) or Softmax(Div(x, c)), with s
/// and c float scalar constants and the scaled tensor read by the Softmax
/// only, becomes cuvil.ScaledSoftmax(x) with scale s (or 1 / c), one pass
/// over the tensor instead of two: attention's scaling of its scores. A
/// Mul's products are the kernel's, bit for bit; x / c becomes x * (1 / c),
/// the same when c is a power of two (sqrt(d) for d = 4^k: 64-wide heads)
/// and otherwise at most one ulp from the quotient, as the GELU pattern's
/// division by sqrt 2 is.
Node *rewriteScaled(Graph &G, Node &N) {
  Value *In = N.input(0);
  Node *P = In ? In->producer() : nullptr;
  if (!P || soleUser(G, In) != &N)
    return nullptr;
  Value *X = nullptr;
  float Scale = 0.0f;
  if (isBinaryOp(P, "Mul")) {
    for (size_t I = 0; I < 2 && !X; ++I)
      if (auto S = scalarF32(P->input(1 - I))) {
        X = P->input(I);
        Scale = *S;
      }
  } else if (isBinaryOp(P, "Div")) {
    if (auto C = scalarF32(P->input(1))) {
      X = P->input(0);
      Scale = 1.0f / *C;
    }
  }
  // A zero, infinite or NaN factor, or one that broadcasts x to a larger
  // shape, stays as it is.
  if (!X || X->dtype() != DType::F32 || X->shape() != In->shape() ||
      !std::isfinite(Scale) || Scale == 0.0f)
    return nullptr;
  auto Attrs = N.attrs();
  Origin O = N.origin();
  O.merge(P->origin());
  Node *R = G.replaceNode(&N, ScaledSoftmaxOp.Name, &ScaledSoftmaxOp, {X});
  for (auto &[Name, V] : Attrs)
    R->setAttr(Name, std::move(V));
  R->setAttr("scale", Scale);
  R->origin() = O;
  G.eraseNodes({P});
  return R;
}

constexpr char SoftmaxK[] = "cuvil_k_softmax_f32";
constexpr char LogSoftmaxK[] = "cuvil_k_logsoftmax_f32";
constexpr char HardmaxK[] = "cuvil_k_hardmax_f32";

} // namespace

// All three share Softmax's axis semantics (2-D coercion before opset 13).
extern const OpDef SoftmaxOp = {.Name = "Softmax",
                                .Verify = verifySoftmaxOp,
                                .Lower = lowerSoftmaxOp<SoftmaxK>,
                                .Macs = noMacs,
                                .Traits = NoTraits,
                                .Rewrite = rewriteScaled,
                                .Shape = shapeSameAsInput,
                                .Attrs = SoftmaxAttrs::Specs};
// It keeps the Softmax's opset, which extents() reads.
extern const OpDef ScaledSoftmaxOp = {.Name = "cuvil.ScaledSoftmax",
                                      .Verify = verifySoftmaxOp,
                                      .Lower = lowerScaled,
                                      .Macs = noMacs,
                                      .Traits = NoTraits,
                                      .Shape = shapeSameAsInput,
                                      .Attrs = ScaledSoftmaxAttrs::Specs};
extern const OpDef LogSoftmaxOp = {.Name = "LogSoftmax",
                                   .Verify = verifySoftmaxOp,
                                   .Lower = lowerSoftmaxOp<LogSoftmaxK>,
                                   .Macs = noMacs,
                                   .Traits = NoTraits,
                                   .Attrs = SoftmaxAttrs::Specs};
extern const OpDef HardmaxOp = {.Name = "Hardmax",
                                .Verify = verifySoftmaxOp,
                                .Lower = lowerSoftmaxOp<HardmaxK>,
                                .Macs = noMacs,
                                .Traits = NoTraits,
                                .Attrs = SoftmaxAttrs::Specs};

} // namespace cuvil
