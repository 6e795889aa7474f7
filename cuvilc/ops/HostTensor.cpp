//===- HostTensor.cpp - Tensors evaluated at compile time -----------------===//
#include "ops/HostTensor.h"

#include "ir/Diagnostic.h"

#include <cmath>
#include <cstring>

namespace cuvil {

double getF(const HostTensor &T, int64_t I) {
  const uint8_t *P = T.Data.data() + I * dtypeSize(T.Ty);
  auto Load = [P](auto X) {
    std::memcpy(&X, P, sizeof(X));
    return X;
  };
  switch (T.Ty) {
  case DType::F32: return Load(float{});
  case DType::F64: return Load(double{});
  case DType::U64: return static_cast<double>(Load(uint64_t{}));
  default: break;
  }
  int64_t V = 0;
  switch (T.Ty) {
  case DType::I8: V = Load(int8_t{}); break;
  case DType::U8:
  case DType::Bool: V = Load(uint8_t{}); break;
  case DType::I16: V = Load(int16_t{}); break;
  case DType::U16: V = Load(uint16_t{}); break;
  case DType::I32: V = Load(int32_t{}); break;
  case DType::U32: V = Load(uint32_t{}); break;
  case DType::I64: V = Load(int64_t{}); break;
  default: break;
  }
  return static_cast<double>(V);
}

int64_t getI(const HostTensor &T, int64_t I) {
  if (isFloat(T.Ty))
    return static_cast<int64_t>(getF(T, I));
  int64_t V = 0;
  unsigned S = dtypeSize(T.Ty);
  std::memcpy(&V, T.Data.data() + I * S, S);
  // Sign-extend the signed types.
  bool Signed = T.Ty == DType::I8 || T.Ty == DType::I16 || T.Ty == DType::I32;
  if (Signed && S < 8 && (V >> (S * 8 - 1)) & 1)
    V |= ~((int64_t(1) << (S * 8)) - 1);
  return V;
}

/// Stores a value given as an integer (exact) or a float.
void putI(HostTensor &T, int64_t I, int64_t V) {
  uint8_t *P = T.Data.data() + I * dtypeSize(T.Ty);
  switch (T.Ty) {
  case DType::F32: {
    float F = static_cast<float>(V);
    std::memcpy(P, &F, 4);
    return;
  }
  case DType::F64: {
    double D = static_cast<double>(V);
    std::memcpy(P, &D, 8);
    return;
  }
  case DType::Bool: *P = V != 0; return;
  default: std::memcpy(P, &V, dtypeSize(T.Ty)); // little-endian host
  }
}

void putF(HostTensor &T, int64_t I, double V) {
  uint8_t *P = T.Data.data() + I * dtypeSize(T.Ty);
  switch (T.Ty) {
  case DType::F32: {
    float F = static_cast<float>(V);
    std::memcpy(P, &F, 4);
    return;
  }
  case DType::F64: std::memcpy(P, &V, 8); return;
  case DType::Bool: *P = V != 0; return;
  case DType::U64: {
    uint64_t U = static_cast<uint64_t>(V);
    std::memcpy(P, &U, 8);
    return;
  }
  default: putI(T, I, static_cast<int64_t>(V));
  }
}

llvm::Expected<bool> foldAccess(const HostTensor &X, const StridedAccess &A,
                                std::vector<int64_t> Shape, HostTensor &Y) {
  if (Y.Ty != X.Ty ||
      checkedElementCount(Shape).value_or(INT64_MAX) > MaxFoldElements)
    return false; // computed at run time, not stored as a weight
  Y.Shape = std::move(Shape);
  Y.Data = applyAccess(X.Data.data(), dtypeSize(X.Ty), A);
  return true;
}

namespace {

/// The inputs broadcast to a common shape, as dense tensors.
llvm::Expected<std::vector<HostTensor>> broadcastAll(const Node &N,
                                                     const HostInputs &In) {
  std::vector<int64_t> Shape;
  for (const HostTensor *X : In) {
    if (!X)
      return nodeError(N, "an input is missing");
    auto S = broadcastShapes(N, Shape, X->Shape);
    if (!S)
      return S.takeError();
    Shape = *S;
  }
  // Too large to fold: no input is expanded (the caller keeps the node).
  if (checkedElementCount(Shape).value_or(INT64_MAX) > MaxFoldElements)
    return std::vector<HostTensor>();
  std::vector<HostTensor> B;
  for (const HostTensor *X : In) {
    HostTensor T{X->Ty, Shape, {}};
    T.Data = applyAccess(X->Data.data(), dtypeSize(X->Ty),
                         broadcastAccess(X->Shape, Shape));
    B.push_back(std::move(T));
  }
  return B;
}

} // namespace

template <Arith Op>
llvm::Expected<bool> foldArith(const Node &N, const HostInputs &In,
                               std::vector<HostTensor> &Out) {
  for (const HostTensor *X : In)
    if (X && !hostType(X->Ty))
      return false;
  auto B = broadcastAll(N, In);
  if (!B)
    return B.takeError();
  if (B->empty())
    return false;
  HostTensor &Y = Out[0];
  Y.Shape = (*B)[0].Shape;
  if (Y.count() > MaxFoldElements)
    return false;
  Y.allocate();
  // Operands are computed in their own type's domain (Where: the values').
  const HostTensor &A = (*B)[0];
  const HostTensor &Val = Op == Arith::Where ? (*B)[1] : A;
  bool F = isFloat(Val.Ty);
  for (int64_t I = 0; I < Y.count(); ++I) {
    if constexpr (Op == Arith::Where) {
      const HostTensor &Pick = getI(A, I) ? (*B)[1] : (*B)[2];
      F ? putF(Y, I, getF(Pick, I)) : putI(Y, I, getI(Pick, I));
      continue;
    } else if constexpr (Op == Arith::Neg || Op == Arith::Not) {
      if (Op == Arith::Not)
        putI(Y, I, !getI(A, I));
      else
        F ? putF(Y, I, -getF(A, I)) : putI(Y, I, -getI(A, I));
      continue;
    } else {
      const HostTensor &C = (*B)[1];
      if (F) {
        double X = getF(A, I), Z = getF(C, I);
        switch (Op) {
        case Arith::Add: putF(Y, I, X + Z); break;
        case Arith::Sub: putF(Y, I, X - Z); break;
        case Arith::Mul: putF(Y, I, X * Z); break;
        case Arith::Div: putF(Y, I, X / Z); break;
        case Arith::Mod:
          if (!N.getInt("fmod", 0))
            return false; // refused by verification
          putF(Y, I, std::fmod(X, Z));
          break;
        case Arith::Equal: putI(Y, I, X == Z); break;
        case Arith::Less: putI(Y, I, X < Z); break;
        case Arith::Greater: putI(Y, I, X > Z); break;
        case Arith::LessOrEqual: putI(Y, I, X <= Z); break;
        case Arith::GreaterOrEqual: putI(Y, I, X >= Z); break;
        default: break;
        }
        // float32 arithmetic rounds each result, as at run time.
        continue;
      }
      int64_t X = getI(A, I), Z = getI(C, I);
      switch (Op) {
      case Arith::Add: putI(Y, I, X + Z); break;
      case Arith::Sub: putI(Y, I, X - Z); break;
      case Arith::Mul: putI(Y, I, X * Z); break;
      case Arith::Div:
        if (Z == 0)
          return false; // left to run time
        putI(Y, I, X / Z);
        break;
      case Arith::Mod: {
        if (Z == 0 || (X == INT64_MIN && Z == -1))
          return false;    // left to run time
        int64_t R = X % Z; // C: the dividend's sign (fmod=1)
        if (!N.getInt("fmod", 0) && R != 0 && (R < 0) != (Z < 0))
          R += Z; // Python: the divisor's sign
        putI(Y, I, R);
        break;
      }
      case Arith::Equal: putI(Y, I, X == Z); break;
      case Arith::Less: putI(Y, I, X < Z); break;
      case Arith::Greater: putI(Y, I, X > Z); break;
      case Arith::LessOrEqual: putI(Y, I, X <= Z); break;
      case Arith::GreaterOrEqual: putI(Y, I, X >= Z); break;
      case Arith::And: putI(Y, I, X && Z); break;
      case Arith::Or: putI(Y, I, X || Z); break;
      case Arith::Xor: putI(Y, I, (X != 0) != (Z != 0)); break;
      default: break;
      }
    }
  }
  return true;
}

#define CUVIL_FOLD_ARITH(Op)                                                   \
  template llvm::Expected<bool> foldArith<Arith::Op>(                          \
      const Node &, const HostInputs &, std::vector<HostTensor> &);
CUVIL_FOLD_ARITH(Add)
CUVIL_FOLD_ARITH(Sub)
CUVIL_FOLD_ARITH(Mul)
CUVIL_FOLD_ARITH(Div)
CUVIL_FOLD_ARITH(Mod)
CUVIL_FOLD_ARITH(Neg)
CUVIL_FOLD_ARITH(Equal)
CUVIL_FOLD_ARITH(Less)
CUVIL_FOLD_ARITH(Greater)
CUVIL_FOLD_ARITH(LessOrEqual)
CUVIL_FOLD_ARITH(GreaterOrEqual)
CUVIL_FOLD_ARITH(And)
CUVIL_FOLD_ARITH(Or)
CUVIL_FOLD_ARITH(Xor)
CUVIL_FOLD_ARITH(Where)
CUVIL_FOLD_ARITH(Not)
#undef CUVIL_FOLD_ARITH

} // namespace cuvil
