//===- QGemm.cpp - cuvil.QGemm: the integer matrix product ----------------===//
//
// Internal op (domain "cuvil", see ops/quant/QInt.h): y[..., n] = the
// requantized product of uint8/int8 x[..., k] (its leading dimensions are
// rows) and packed int8 weights, made by the lower-qdq pass of a quantized
// MatMul, Gemm or QLinearMatMul with constant weights.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/quant/QIntOps.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

struct GemmDims {
  int64_t M, N, K;
};

GemmDims dims(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  const int64_t K = X->rank() ? X->shape().back() : 1;
  return {K ? X->numElements() / K : 0, Y->rank() ? Y->shape().back() : 1, K};
}

llvm::Error verifyQGemmOp(const Node &N) {
  if (N.numInputs() != 3 || N.outputs().size() != 1)
    return nodeError(N, "internal error: the integer matrix product takes "
                        "x, wp, qparams and gives y");
  const Value *X = N.input(0), *Y = N.output(0);
  const GemmDims D = dims(N);
  std::vector<int64_t> Want(X->shape());
  if (Want.empty())
    return nodeError(N, "internal error: x must have a dimension to reduce");
  Want.back() = D.N;
  if (Y->shape() != Want)
    return nodeError(N,
                     "internal error: y must be x's shape with its last "
                     "dimension {}",
                     D.N);
  const int64_t Kr = std::max<int64_t>(QIntAttrs(N).Kr, 1);
  return verifyQIntOperands(N, D.N, (D.K + Kr - 1) / Kr * Kr);
}

llvm::Error lowerQGemmOp(const Node &N, std::vector<KernelCall> &Calls) {
  const QIntAttrs A(N);
  const GemmDims D = dims(N);
  const QParams P = qparams(N, D.N);
  auto Fill = [&](auto K) {
    K.a = N.input(0);
    K.wp = N.input(1);
    K.bias = P.Bias;
    if constexpr (requires { K.wsum; }) // the packed kernels take none
      K.wsum = P.WSum;
    K.rq = P.Rq;
    K.y = N.output(0);
    K.m = D.M;
    K.n = D.N;
    K.k = D.K;
    K.a_type = qintType(N.input(0));
    K.a_zp = A.XZp;
    K.y_type = qintType(N.output(0));
    K.y_zp = A.YZp;
    K.y_lo = A.YLo;
    K.y_hi = A.YHi;
    return K;
  };
  if (A.Packed) {
    Calls.push_back(Fill(kabi::QgemmPackedS8{}).call());
  } else {
    kabi::QgemmS8 K;
    K.mr = A.Mr;
    K.kr = A.Kr;
    Calls.push_back(Fill(K).call());
  }
  return llvm::Error::success();
}

int64_t macsQGemm(const Node &N) {
  const GemmDims D = dims(N);
  return D.M * D.N * D.K;
}

} // namespace

extern const OpDef QGemmOp = {.Name = "cuvil.QGemm",
                              .Verify = verifyQGemmOp,
                              .Lower = lowerQGemmOp,
                              .Macs = macsQGemm,
                              .Traits = NoTraits,
                              .Attrs = QIntAttrs::Specs};

} // namespace cuvil
