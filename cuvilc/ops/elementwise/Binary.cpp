//===- Binary.cpp - Broadcast element-wise ops ----------------------------===//
//
// Binary ops (Add, Sub, Mul, Div, Pow, Mod, BitShift, comparisons, logic),
// the variadic Sum/Mean/Max/Min and the ternary Where, all with numpy
// broadcasting. Each lowers to cuvil_k_<stem>_<dtype> kernels with the
// broadcast loop signature (see kernels.h); the per-op differences are a row
// of the table below plus a few kernel-name rules (Pow's mixed types, Mod's
// fmod, BitShift's direction).
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/HostTensor.h"
#include "ops/OpRegistry.h"
#include "ops/elementwise/Broadcast.h"

#include <cuvil/kernels.h>

#include <cstring>

namespace cuvil {
namespace {

constexpr uint32_t bit(DType T) { return 1u << static_cast<unsigned>(T); }
constexpr uint32_t UInts =
    bit(DType::U8) | bit(DType::U16) | bit(DType::U32) | bit(DType::U64);
constexpr uint32_t Ints = UInts | bit(DType::I8) | bit(DType::I16) |
                          bit(DType::I32) | bit(DType::I64);
constexpr uint32_t Floats = bit(DType::F32) | bit(DType::F64);
constexpr uint32_t Numbers = Ints | Floats;
constexpr uint32_t Bools = bit(DType::Bool);

struct BinarySpec {
  const char *OnnxName;
  const char *Stem; ///< kernel cuvil_k_<stem>_<dtype> (some ops adjust it)
  uint32_t Types;   ///< element types of input A
  bool BoolOut;     ///< output is bool (else A's type)
};

constexpr BinarySpec Specs[] = {
    {"Add", "add", Numbers, false},
    {"And", "and", Bools, false},
    {"BitShift", "shl", UInts, false},
    {"Div", "div", Numbers, false},
    {"Equal", "equal", Numbers | Bools, true},
    {"Greater", "greater", Numbers, true},
    {"GreaterOrEqual", "greater_equal", Numbers, true},
    {"Less", "less", Numbers, true},
    {"LessOrEqual", "less_equal", Numbers, true},
    {"Max", "max", Numbers | bit(DType::F16), false},
    {"Mean", "add", Floats, false},
    {"Min", "min", Numbers | bit(DType::F16), false},
    {"Mod", "mod", Numbers | bit(DType::F16), false},
    {"Mul", "mul", Numbers, false},
    {"Or", "or", Bools, false},
    {"Pow", "pow", bit(DType::F32) | bit(DType::I32) | bit(DType::I64), false},
    {"Sub", "sub", Numbers, false},
    {"Sum", "add", Numbers, false},
    {"Xor", "xor", Bools, false},
};

#define MOD_ATTRS(X) X(Fmod, "fmod", Int, 0)
CUVIL_OP_ATTRS(ModAttrs, MOD_ATTRS)
#define BITSHIFT_ATTRS(X) X(Direction, "direction", String, "")
CUVIL_OP_ATTRS(BitShiftAttrs, BITSHIFT_ATTRS)

const BinarySpec &specOf(const Node &N) {
  for (const BinarySpec &S : Specs)
    if (N.opType() == S.OnnxName)
      return S;
  assert(false && "element-wise op without a BinarySpec row");
  return Specs[0];
}

std::string typeList(uint32_t Mask) {
  std::string S;
  for (unsigned T = 0; T < 32; ++T)
    if (Mask & (1u << T))
      S += (S.empty() ? "" : ", ") +
           std::string(dtypeName(static_cast<DType>(T)));
  return S;
}

llvm::Error requireType(const Node &N, const Value *V, uint32_t Mask) {
  if (!(Mask & bit(V->dtype())))
    return nodeError(N, "input '{}' has element type {}; {} supports {}",
                     V->name(), dtypeName(V->dtype()), N.opType(),
                     typeList(Mask));
  return llvm::Error::success();
}

/// The kernel computing one A op B step of N, after type checks.
llvm::Expected<std::string> kernelName(const Node &N, DType A, DType B) {
  const BinarySpec &S = specOf(N);
  std::string Stem = S.Stem;
  std::string Ty(dtypeName(A));
  if (N.opType() == "Pow") {
    // Same-type pairs are cuvil_k_pow_<t>; the mixed ones kernels.h lists
    // are cuvil_k_pow_<ta>_<tb>.
    static constexpr std::pair<DType, DType> Mixed[] = {
        {DType::F32, DType::I32}, {DType::F32, DType::I64},
        {DType::F32, DType::U32}, {DType::F32, DType::U64},
        {DType::I32, DType::F32}, {DType::I64, DType::F32}};
    if (A == B)
      return "cuvil_k_pow_" + Ty;
    for (auto [MA, MB] : Mixed)
      if (MA == A && MB == B)
        return fmt::format("cuvil_k_pow_{}_{}", dtypeName(A), dtypeName(B));
    return nodeError(N, "Pow of {} by {} is not supported", dtypeName(A),
                     dtypeName(B));
  }
  if (A != B)
    return nodeError(N, "inputs have different element types ({} and {})",
                     dtypeName(A), dtypeName(B));
  if (N.opType() == "Mod") {
    int64_t Fmod = ModAttrs(N).Fmod;
    bool IsFloat = bit(A) & (Floats | bit(DType::F16));
    if (IsFloat && !Fmod)
      return nodeError(N, "floating-point Mod requires fmod=1");
    Stem = Fmod ? "fmod" : "mod";
  } else if (N.opType() == "BitShift") {
    const BitShiftAttrs Attrs(N);
    const std::string &Dir = Attrs.Direction;
    if (Dir != "LEFT" && Dir != "RIGHT")
      return nodeError(N, "unsupported direction '{}' (LEFT or RIGHT)", Dir);
    Stem = Dir == "LEFT" ? "shl" : "shr";
  }
  return fmt::format("cuvil_k_{}_{}", Stem, Ty);
}

llvm::Expected<BroadcastLoops> loops(const Node &N, const Value *A,
                                     const Value *B) {
  return broadcastLoops(N, N.output(0)->shape(), {A, B}, CUVIL_MAX_RANK);
}

llvm::Error checkOutput(const Node &N, DType Want) {
  const Value *Y = N.output(0);
  if (Y->dtype() != Want)
    return nodeError(N, "output '{}' has element type {}; expected {}",
                     Y->name(), dtypeName(Y->dtype()), dtypeName(Want));
  return llvm::Error::success();
}

// ---- Binary ops ------------------------------------------------------------

llvm::Error verifyBinary(const Node &N) {
  const BinarySpec &S = specOf(N);
  const Value *A = N.input(0), *B = N.input(1);
  if (!A || !B || N.numInputs() != 2)
    return nodeError(N, "needs two inputs");
  if (auto E = requireType(N, A, S.Types))
    return E;
  if (auto E = checkOutput(N, S.BoolOut ? DType::Bool : A->dtype()))
    return E;
  if (auto K = kernelName(N, A->dtype(), B->dtype()); !K)
    return K.takeError();
  return loops(N, A, B).takeError();
}

llvm::Error lowerBinary(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *A = N.input(0), *B = N.input(1);
  auto K = kernelName(N, A->dtype(), B->dtype());
  if (!K)
    return K.takeError();
  auto L = loops(N, A, B);
  if (!L)
    return L.takeError();
  Calls.push_back(kabi::ABYShapeAStrBStrGroup{.Kernel = *K,
                                              .a = A,
                                              .b = B,
                                              .y = N.output(0),
                                              .shape = L->Shape,
                                              .a_str = L->Strides[0],
                                              .b_str = L->Strides[1]}
                      .call());
  return llvm::Error::success();
}

// ---- Variadic Sum, Mean, Max, Min ------------------------------------------
// y = in0 op in1, then y = y op in_k for k >= 2 (the kernels allow y to alias
// a dense operand); Mean finishes with y *= 1/n. One input is a copy. The
// output gets its own buffer: running in input 0's would clobber it before a
// later operand that is the same value is read.

llvm::Error verifyVariadic(const Node &N) {
  const BinarySpec &S = specOf(N);
  if (N.numInputs() == 0)
    return nodeError(N, "needs at least one input");
  for (const Value *V : N.inputs()) {
    if (!V)
      return nodeError(N, "has an empty input name");
    if (auto E = requireType(N, V, S.Types))
      return E;
    if (V->dtype() != N.input(0)->dtype())
      return nodeError(N, "inputs have different element types ({} and {})",
                       dtypeName(N.input(0)->dtype()), dtypeName(V->dtype()));
    if (auto L = broadcastLoops(N, N.output(0)->shape(), {V}, CUVIL_MAX_RANK);
        !L)
      return L.takeError();
  }
  return checkOutput(N, N.input(0)->dtype());
}

llvm::Error lowerVariadic(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *Y = N.output(0);
  DType T = Y->dtype();
  if (N.numInputs() == 1) {
    if (N.input(0)->shape() != Y->shape())
      return nodeError(N, "a single input must have the output's shape");
    KernelCall C =
        kabi::Copy{.src = N.input(0), .dst = Y, .nbytes = Y->byteSize()}.call();
    C.IsCopy = true;
    Calls.push_back(std::move(C));
    return llvm::Error::success();
  }
  auto K = kernelName(N, T, T);
  if (!K)
    return K.takeError();
  for (size_t I = 1; I < N.numInputs(); ++I) {
    const Value *A = I == 1 ? N.input(0) : Y, *B = N.input(I);
    auto L = loops(N, A, B);
    if (!L)
      return L.takeError();
    Calls.push_back(kabi::ABYShapeAStrBStrGroup{.Kernel = *K,
                                                .a = A,
                                                .b = B,
                                                .y = Y,
                                                .shape = L->Shape,
                                                .a_str = L->Strides[0],
                                                .b_str = L->Strides[1]}
                        .call());
  }
  if (N.opType() == "Mean")
    Calls.push_back(kabi::ScaleGroup{
        .Kernel = fmt::format("cuvil_k_scale_{}", dtypeName(T)),
        .x = Y,
        .y = Y,
        .n = Y->numElements(),
        .s = 1.0f / static_cast<float>(N.numInputs())}
                        .call());
  return llvm::Error::success();
}

// ---- Where -----------------------------------------------------------------

llvm::Expected<BroadcastLoops> whereLoops(const Node &N) {
  return broadcastLoops(N, N.output(0)->shape(),
                        {N.input(0), N.input(1), N.input(2)}, CUVIL_MAX_RANK);
}

llvm::Error verifyWhere(const Node &N) {
  const Value *C = N.input(0), *A = N.input(1), *B = N.input(2);
  if (!C || !A || !B)
    return nodeError(N, "needs three inputs");
  if (auto E = requireType(N, C, Bools))
    return E;
  if (A->dtype() != B->dtype())
    return nodeError(N, "inputs have different element types ({} and {})",
                     dtypeName(A->dtype()), dtypeName(B->dtype()));
  unsigned Size = dtypeSize(A->dtype());
  if (Size != 1 && Size != 2 && Size != 4 && Size != 8)
    return nodeError(N, "element type {} is not supported",
                     dtypeName(A->dtype()));
  if (auto E = checkOutput(N, A->dtype()))
    return E;
  return whereLoops(N).takeError();
}

llvm::Error lowerWhere(const Node &N, std::vector<KernelCall> &Calls) {
  auto L = whereLoops(N);
  if (!L)
    return L.takeError();
  Calls.push_back(kabi::WhereGroup{
      .Kernel =
          fmt::format("cuvil_k_where_b{}", 8 * dtypeSize(N.output(0)->dtype())),
      .c = N.input(0),
      .a = N.input(1),
      .b = N.input(2),
      .y = N.output(0),
      .shape = L->Shape,
      .c_str = L->Strides[0],
      .a_str = L->Strides[1],
      .b_str = L->Strides[2]}
                      .call());
  return llvm::Error::success();
}

} // namespace

// The planner lets the output reuse input 0 only when input 0 has the
// output's byte size, which for these ops (output of input 0's type) means
// its shape: what the kernels allow. Comparisons change the element size,
// so their outputs are fresh.
#define CUVIL_BINARY_OP_ATTRS(X, Tr, Sh, Fo, A)                                \
  extern const OpDef X##Op = {.Name = #X,                                      \
                              .Verify = verifyBinary,                          \
                              .Lower = lowerBinary,                            \
                              .Macs = noMacs,                                  \
                              .Traits = ElementWise | (Tr),                    \
                              .Shape = (Sh),                                   \
                              .Fold = (Fo),                                    \
                              .Attrs = (A)};
#define CUVIL_BINARY_OP(X, Tr, Sh, Fo)                                         \
  CUVIL_BINARY_OP_ATTRS(X, Tr, Sh, Fo, nullptr)
CUVIL_BINARY_OP(Add, InPlace | Commutative | Sum, shapeBroadcast,
                foldArith<Arith::Add>)
CUVIL_BINARY_OP(And, InPlace | Commutative, shapeBroadcast,
                foldArith<Arith::And>)
CUVIL_BINARY_OP_ATTRS(BitShift, InPlace, nullptr, nullptr, BitShiftAttrs::Specs)
CUVIL_BINARY_OP(Div, InPlace, shapeBroadcast, foldArith<Arith::Div>)
CUVIL_BINARY_OP(Equal, Commutative, shapeBroadcast, foldArith<Arith::Equal>)
CUVIL_BINARY_OP(Greater, NoTraits, shapeBroadcast, foldArith<Arith::Greater>)
CUVIL_BINARY_OP(GreaterOrEqual, NoTraits, shapeBroadcast,
                foldArith<Arith::GreaterOrEqual>)
CUVIL_BINARY_OP(Less, NoTraits, shapeBroadcast, foldArith<Arith::Less>)
CUVIL_BINARY_OP(LessOrEqual, NoTraits, shapeBroadcast,
                foldArith<Arith::LessOrEqual>)
CUVIL_BINARY_OP_ATTRS(Mod, InPlace, shapeBroadcast, foldArith<Arith::Mod>,
                      ModAttrs::Specs)
CUVIL_BINARY_OP(Mul, InPlace | Commutative, shapeBroadcast,
                foldArith<Arith::Mul>)
CUVIL_BINARY_OP(Or, InPlace | Commutative, shapeBroadcast, foldArith<Arith::Or>)
CUVIL_BINARY_OP(Pow, InPlace, shapeBroadcast, nullptr)
CUVIL_BINARY_OP(Sub, InPlace, shapeBroadcast, foldArith<Arith::Sub>)
CUVIL_BINARY_OP(Xor, InPlace | Commutative, shapeBroadcast,
                foldArith<Arith::Xor>)
#undef CUVIL_BINARY_OP
#undef CUVIL_BINARY_OP_ATTRS

#define CUVIL_VARIADIC_OP(X, Sh)                                               \
  extern const OpDef X##Op = {.Name = #X,                                      \
                              .Verify = verifyVariadic,                        \
                              .Lower = lowerVariadic,                          \
                              .Macs = noMacs,                                  \
                              .Traits = ElementWise | Commutative,             \
                              .Shape = (Sh)};
CUVIL_VARIADIC_OP(Max, shapeBroadcast)
CUVIL_VARIADIC_OP(Mean, nullptr)
CUVIL_VARIADIC_OP(Min, shapeBroadcast)
CUVIL_VARIADIC_OP(Sum, nullptr)
#undef CUVIL_VARIADIC_OP

extern const OpDef WhereOp = {.Name = "Where",
                              .Verify = verifyWhere,
                              .Lower = lowerWhere,
                              .Macs = noMacs,
                              .Traits = ElementWise,
                              .Shape = shapeBroadcast,
                              .Fold = foldArith<Arith::Where>};

} // namespace cuvil
