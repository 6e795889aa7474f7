//===- UnaryMath.cpp - Element-wise math: Abs, Exp, Sin, IsNaN, Not, ... --===//
//
// Each op is one UnarySpec (its kernel in
// runtime-baremetal/kernels/elementwise/ unary_math.c) and one OpDef built from
// the shared templates.
//
//===----------------------------------------------------------------------===//
#include "ops/HostTensor.h"
#include "ops/elementwise/ElementwiseUnary.h"
#include "ops/elementwise/GeluPattern.h"

namespace cuvil {
namespace {

#define ISINF_ATTRS(X)                                                         \
  X(DetectNegative, "detect_negative", Int, 1)                                 \
  X(DetectPositive, "detect_positive", Int, 1)
CUVIL_OP_ATTRS(IsInfAttrs, ISINF_ATTRS)

constexpr UnarySpec AbsS{"cuvil_k_abs_f32"};
constexpr UnarySpec AcosS{"cuvil_k_acos_f32"};
constexpr UnarySpec AcoshS{"cuvil_k_acosh_f32"};
constexpr UnarySpec AsinS{"cuvil_k_asin_f32"};
constexpr UnarySpec AsinhS{"cuvil_k_asinh_f32"};
constexpr UnarySpec AtanS{"cuvil_k_atan_f32"};
constexpr UnarySpec AtanhS{"cuvil_k_atanh_f32"};
constexpr UnarySpec CeilS{"cuvil_k_ceil_f32"};
constexpr UnarySpec CosS{"cuvil_k_cos_f32"};
constexpr UnarySpec CoshS{"cuvil_k_cosh_f32"};
constexpr UnarySpec ErfS{"cuvil_k_erf_f32"};
constexpr UnarySpec ExpS{"cuvil_k_exp_f32"};
constexpr UnarySpec FloorS{"cuvil_k_floor_f32"};
constexpr UnarySpec IsInfS{"cuvil_k_isinf_f32", DType::F32, DType::Bool};
constexpr UnarySpec IsNaNS{"cuvil_k_isnan_f32", DType::F32, DType::Bool};
constexpr UnarySpec LogS{"cuvil_k_log_f32"};
constexpr UnarySpec NegS{"cuvil_k_neg_f32"};
constexpr UnarySpec NotS{"cuvil_k_not_bool", DType::Bool, DType::Bool};
constexpr UnarySpec ReciprocalS{"cuvil_k_reciprocal_f32"};
constexpr UnarySpec RoundS{"cuvil_k_round_f32"};
constexpr UnarySpec SignS{"cuvil_k_sign_f32"};
constexpr UnarySpec SinS{"cuvil_k_sin_f32"};
constexpr UnarySpec SinhS{"cuvil_k_sinh_f32"};
constexpr UnarySpec SqrtS{"cuvil_k_sqrt_f32"};
constexpr UnarySpec TanS{"cuvil_k_tan_f32"};

kabi::IsinfF32 isInfParams(const Node &N) {
  const IsInfAttrs A(N);
  return {.detect_negative = A.DetectNegative,
          .detect_positive = A.DetectPositive};
}

} // namespace

/// Op X with shape hook Sh and fold hook Fo (nullptr: none).
#define CUVIL_UNARY_OP_HOOKS(X, Spec, Place, Sh, Fo)                           \
  extern const OpDef X##Op = {.Name = #X,                                      \
                              .Verify = verifyUnary<Spec>,                     \
                              .Lower = lowerUnary<Spec>,                       \
                              .Macs = noMacs,                                  \
                              .Traits = ElementWise | (Place),                 \
                              .Shape = (Sh),                                   \
                              .Fold = (Fo)};
#define CUVIL_UNARY_OP(X, Spec, Place)                                         \
  CUVIL_UNARY_OP_HOOKS(X, Spec, Place, nullptr, nullptr)

CUVIL_UNARY_OP_HOOKS(Abs, AbsS, InPlace, shapeSameAsInput, nullptr)
CUVIL_UNARY_OP(Acos, AcosS, InPlace)
CUVIL_UNARY_OP(Acosh, AcoshS, InPlace)
CUVIL_UNARY_OP(Asin, AsinS, InPlace)
CUVIL_UNARY_OP(Asinh, AsinhS, InPlace)
CUVIL_UNARY_OP(Atan, AtanS, InPlace)
CUVIL_UNARY_OP(Atanh, AtanhS, InPlace)
CUVIL_UNARY_OP(Ceil, CeilS, InPlace)
CUVIL_UNARY_OP_HOOKS(Cos, CosS, InPlace, shapeSameAsInput, nullptr)
CUVIL_UNARY_OP(Cosh, CoshS, InPlace)
// Erf roots the exact GELU as exporters write it (GeluPattern.h).
extern const OpDef ErfOp = {.Name = "Erf",
                            .Verify = verifyUnary<ErfS>,
                            .Lower = lowerUnary<ErfS>,
                            .Macs = noMacs,
                            .Traits = ElementWise | InPlace,
                            .Rewrite = rewriteExactGelu,
                            .Shape = shapeSameAsInput};
CUVIL_UNARY_OP_HOOKS(Exp, ExpS, InPlace, shapeSameAsInput, nullptr)
CUVIL_UNARY_OP(Floor, FloorS, InPlace)
// Bool outputs are narrower than their f32 inputs: never in place.
extern const OpDef IsInfOp = {.Name = "IsInf",
                              .Verify = verifyUnary<IsInfS>,
                              .Lower = lowerUnaryWith<isInfParams>,
                              .Macs = noMacs,
                              .Traits = ElementWise,
                              .Attrs = IsInfAttrs::Specs};
CUVIL_UNARY_OP(IsNaN, IsNaNS, NoTraits)
CUVIL_UNARY_OP_HOOKS(Log, LogS, InPlace, shapeSameAsInput, nullptr)
CUVIL_UNARY_OP_HOOKS(Neg, NegS, InPlace, shapeSameAsInput,
                     foldArith<Arith::Neg>)
CUVIL_UNARY_OP_HOOKS(Not, NotS, InPlace, nullptr, foldArith<Arith::Not>)
CUVIL_UNARY_OP(Reciprocal, ReciprocalS, InPlace)
CUVIL_UNARY_OP(Round, RoundS, InPlace)
CUVIL_UNARY_OP(Sign, SignS, InPlace)
CUVIL_UNARY_OP_HOOKS(Sin, SinS, InPlace, shapeSameAsInput, nullptr)
CUVIL_UNARY_OP(Sinh, SinhS, InPlace)
CUVIL_UNARY_OP_HOOKS(Sqrt, SqrtS, InPlace, shapeSameAsInput, nullptr)
CUVIL_UNARY_OP(Tan, TanS, InPlace)

#undef CUVIL_UNARY_OP
#undef CUVIL_UNARY_OP_HOOKS

} // namespace cuvil
