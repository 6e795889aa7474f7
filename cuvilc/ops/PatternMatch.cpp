//===- PatternMatch.cpp - Small matchers for the Rewrite hooks ------------===//
#include "ops/PatternMatch.h"

#include <cmath>
#include <cstring>

namespace cuvil {

bool isBinaryOp(const Node *N, const char *Op) {
  return N && N->opType() == Op && N->domain().empty() && N->numInputs() == 2;
}

std::optional<float> scalarF32(const Value *V) {
  if (!V || !V->isConstant() || V->dtype() != DType::F32 ||
      V->numElements() != 1 || V->data().size() != sizeof(float))
    return std::nullopt;
  return V->f32()[0];
}

bool isScalar(const Value *V, float Want) {
  auto S = scalarF32(V);
  return S && std::fabs(*S - Want) <= 1e-6f * std::fabs(Want);
}

Value *otherThanScalar(const Node *N, float Want) {
  for (size_t I = 0; I < 2; ++I)
    if (isScalar(N->input(1 - I), Want))
      return N->input(I);
  return nullptr;
}

Node *soleUser(const Graph &G, const Value *V) {
  if (G.isGraphOutput(V) || V->users().size() != 1)
    return nullptr;
  return V->users()[0];
}

} // namespace cuvil
