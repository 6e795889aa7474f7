//===- Cast.cpp - ONNX Cast at run time -----------------------------------===//
//
// Converts between float32/64, the integer types and bool with one kernel
// per pair (cuvil_k_cast_<from>_<to>), and float16/bfloat16 to and from
// float32. CastLike (the type of input 1) is the same. A Cast of a constant
// is folded at compile time by the fold-constants pass instead.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/HostTensor.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

bool isHalf(DType T) { return T == DType::F16 || T == DType::BF16; }

/// float16 and bfloat16 convert to and from float32 only.
bool castable(DType From, DType To) {
  if (isHalf(From) || isHalf(To))
    return From == To || From == DType::F32 || To == DType::F32;
  return true;
}

llvm::Error verifyCastOp(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X)
    return nodeError(N, "missing input");
  if (!castable(X->dtype(), Y->dtype()))
    return nodeError(N, "casting {} to {} is not supported",
                     dtypeName(X->dtype()), dtypeName(Y->dtype()));
  if (X->shape() != Y->shape())
    return nodeError(N, "output '{}' differs in shape from the input",
                     Y->name());
  return llvm::Error::success();
}

llvm::Error lowerCastOp(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (X->dtype() == Y->dtype()) {
    KernelCall C =
        kabi::Copy{.src = X, .dst = Y, .nbytes = Y->byteSize()}.call();
    C.IsCopy = true;
    Calls.push_back(std::move(C));
    return llvm::Error::success();
  }
  // Before opset 19, ONNX's reference truncated float32 to bfloat16.
  bool Trunc = Y->dtype() == DType::BF16 && N.opset() < 19;
  Calls.push_back(kabi::XYNGroup{
      .Kernel = fmt::format("cuvil_k_cast_{}_{}{}", dtypeName(X->dtype()),
                            dtypeName(Y->dtype()), Trunc ? "_trunc" : ""),
      .x = X,
      .y = Y,
      .n = Y->numElements()}
                      .call());
  return llvm::Error::success();
}

llvm::Expected<bool> foldCast(const Node &, const HostInputs &In,
                              std::vector<HostTensor> &Out) {
  const HostTensor &X = *In[0];
  HostTensor &Y = Out[0];
  if (!hostType(X.Ty) || !hostType(Y.Ty))
    return false;
  Y.Shape = X.Shape;
  Y.allocate();
  for (int64_t I = 0; I < X.count(); ++I) {
    if (isFloat(X.Ty))
      putF(Y, I, getF(X, I));
    else
      putI(Y, I, getI(X, I));
  }
  return true;
}

} // namespace

extern const OpDef CastOp = {.Name = "Cast",
                             .Verify = verifyCastOp,
                             .Lower = lowerCastOp,
                             .Macs = noMacs,
                             .Traits = ElementWise,
                             .Shape = shapeSameAsInput,
                             .Fold = foldCast};
extern const OpDef CastLikeOp = {"CastLike", verifyCastOp, lowerCastOp, noMacs,
                                 ElementWise};

} // namespace cuvil
