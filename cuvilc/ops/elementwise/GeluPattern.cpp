//===- GeluPattern.cpp - GELU written with Erf as one Gelu ----------------===//
//
// Below opset 20 ONNX has no Gelu, so exporters write the exact GELU,
// x * 0.5 * (1 + erf(x / sqrt 2)), as five nodes:
//
//   u = Div(x, sqrt 2)  or  Mul(x, 1 / sqrt 2)
//   e = Add(Erf(u), 1)
//   y = Mul(Mul(x, e), 0.5)  or  Mul(Mul(x, 0.5), e)  or  Mul(x, Mul(e, 0.5))
//
// (operands of Add and Mul in either order). Each is a pass over the
// tensor; the chain becomes one Gelu (approximate "none"), whose kernel
// computes the same expression in one. Every intermediate must have no
// other use and the constants must be scalars (any rank, one element)
// within 1e-6 of their values. Erf's Rewrite hook (rewrite-patterns pass).
//
//===----------------------------------------------------------------------===//
#include "ops/elementwise/GeluPattern.h"
#include "ops/OpRegistry.h"
#include "ops/PatternMatch.h"

#include <cmath>
#include <optional>

namespace cuvil {
namespace {

struct GeluMatch {
  Value *X = nullptr;
  std::vector<Node *> Dead; ///< every node of the chain but the last
  Node *Last = nullptr;
};

/// Matches the chain through Erf node E.
std::optional<GeluMatch> match(const Graph &G, Node *E) {
  const float Sqrt2 = std::sqrt(2.0f);
  Node *Scale = E->input(0) ? E->input(0)->producer() : nullptr;
  Value *X = nullptr;
  if (isBinaryOp(Scale, "Div") && isScalar(Scale->input(1), Sqrt2))
    X = Scale->input(0);
  else if (isBinaryOp(Scale, "Mul"))
    X = otherThanScalar(Scale, 1.0f / Sqrt2);
  if (!X || !soleUser(G, E->input(0)) || X->dtype() != DType::F32)
    return std::nullopt;
  Node *Plus = soleUser(G, E->output(0));
  if (!isBinaryOp(Plus, "Add") || otherThanScalar(Plus, 1.0f) != E->output(0))
    return std::nullopt;
  GeluMatch M{X, {Scale, E, Plus}, nullptr};
  // (x * e) * 0.5, or x * (e * 0.5): the product of e with one factor,
  // then with the other.
  Node *P1 = soleUser(G, Plus->output(0));
  if (!isBinaryOp(P1, "Mul"))
    return std::nullopt;
  Value *Other = P1->input(P1->input(0) == Plus->output(0) ? 1 : 0);
  Node *P2 = soleUser(G, P1->output(0));
  if (Other == X && isBinaryOp(P2, "Mul") &&
      otherThanScalar(P2, 0.5f) == P1->output(0)) {
    M.Dead.push_back(P1);
    M.Last = P2;
  } else if (Other == X) {
    return std::nullopt;
  } else if (isScalar(Other, 0.5f) && isBinaryOp(P2, "Mul") &&
             (P2->input(0) == X || P2->input(1) == X) &&
             P2->input(0) != P2->input(1)) {
    M.Dead.push_back(P1);
    M.Last = P2;
  } else if (Node *Half = Other->producer(); isBinaryOp(Half, "Mul") &&
                                             otherThanScalar(Half, 0.5f) == X &&
                                             soleUser(G, Other)) {
    // (x * 0.5) * e: the half is computed before the Erf chain.
    M.Dead.push_back(Half);
    M.Last = P1;
  } else {
    return std::nullopt;
  }
  // Gelu is element-wise: y must have x's shape (no broadcast hid in the
  // chain).
  if (M.Last->output(0)->shape() != X->shape())
    return std::nullopt;
  return M;
}

} // namespace

Node *rewriteExactGelu(Graph &G, Node &Erf) {
  auto M = match(G, &Erf);
  if (!M)
    return nullptr;
  Origin O = M->Last->origin();
  for (Node *D : M->Dead)
    O.merge(D->origin());
  Node *R = G.replaceNode(M->Last, "Gelu", lookupOp("Gelu"), {M->X});
  R->setOpset(20);
  R->origin() = O;
  G.eraseNodes(M->Dead);
  return R;
}

} // namespace cuvil
