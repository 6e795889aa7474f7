//===- Softmax.cpp - Softmax, LogSoftmax, Hardmax -------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

namespace cuvil {
namespace {

// The default axis depends on the opset (see extents): -1 here is that of
// opset >= 13, the older one is taken when the attribute is absent.
#define SOFTMAX_ATTRS(X) X(Axis, "axis", Int, -1)
CUVIL_OP_ATTRS(SoftmaxAttrs, SOFTMAX_ATTRS)

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

llvm::Error verify(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  return extents(N).takeError();
}

template <const char *Kernel>
llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
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

constexpr char SoftmaxK[] = "cuvil_k_softmax_f32";
constexpr char LogSoftmaxK[] = "cuvil_k_logsoftmax_f32";
constexpr char HardmaxK[] = "cuvil_k_hardmax_f32";

} // namespace

// All three share Softmax's axis semantics (2-D coercion before opset 13).
extern const OpDef SoftmaxOp = {.Name = "Softmax",
                                .Verify = verify,
                                .Lower = lower<SoftmaxK>,
                                .Macs = noMacs,
                                .Traits = NoTraits,
                                .Shape = shapeSameAsInput,
                                .Attrs = SoftmaxAttrs::Specs};
extern const OpDef LogSoftmaxOp = {.Name = "LogSoftmax",
                                   .Verify = verify,
                                   .Lower = lower<LogSoftmaxK>,
                                   .Macs = noMacs,
                                   .Traits = NoTraits,
                                   .Attrs = SoftmaxAttrs::Specs};
extern const OpDef HardmaxOp = {.Name = "Hardmax",
                                .Verify = verify,
                                .Lower = lower<HardmaxK>,
                                .Macs = noMacs,
                                .Traits = NoTraits,
                                .Attrs = SoftmaxAttrs::Specs};

} // namespace cuvil
