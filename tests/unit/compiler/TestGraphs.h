//===- TestGraphs.h - Small IR graphs for the unit tests --------*- C++ -*-===//
#ifndef CUVIL_TESTS_UNIT_TESTGRAPHS_H
#define CUVIL_TESTS_UNIT_TESTGRAPHS_H

#include "ir/Graph.h"
#include "ops/LowerGraph.h"
#include "ops/OpRegistry.h"

#include <cstring>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <memory>
#include <vector>

namespace cuvil::test {

/// What N's op record says of N: empty when it verifies.
inline std::string verifyMessage(const Node &N) {
  llvm::Error E = N.def()->Verify(N);
  return E ? llvm::toString(std::move(E)) : std::string();
}

inline Value *constF32(Graph &G, const std::string &Name,
                       std::vector<int64_t> Shape, std::vector<float> Data) {
  Value *V =
      G.addValue(Name, DType::F32, std::move(Shape), ValueKind::Constant);
  std::vector<uint8_t> B(Data.size() * 4);
  std::memcpy(B.data(), Data.data(), B.size());
  V->setData(std::move(B));
  return V;
}

inline Value *constI64(Graph &G, const std::string &Name,
                       std::vector<int64_t> Shape, std::vector<int64_t> Data) {
  Value *V =
      G.addValue(Name, DType::I64, std::move(Shape), ValueKind::Constant);
  std::vector<uint8_t> B(Data.size() * 8);
  std::memcpy(B.data(), Data.data(), B.size());
  V->setData(std::move(B));
  return V;
}

/// 128 zero bytes: an embedded weight blob for code generation tests
/// (CodegenOptions::EmbeddedBlob refers to it).
inline const std::vector<uint8_t> &zeroBlob() {
  static const std::vector<uint8_t> Zeros(128, 0);
  return Zeros;
}

/// G's kernel calls (see lowerGraph); a failure fails the current test.
inline GraphLowering lowered(const Graph &G) {
  auto L = lowerGraph(G);
  if (!L) {
    ADD_FAILURE() << llvm::toString(L.takeError());
    return {};
  }
  return std::move(*L);
}

inline Node *addOp(Graph &G, const std::string &Op, const std::string &Name,
                   std::vector<Value *> Ins, std::vector<Value *> Outs,
                   int Index) {
  Node *N = G.addNode(Op, Name, lookupOp(Op), std::move(Ins), std::move(Outs));
  N->setOpset(13);
  N->origin().Names.push_back(Name);
  N->origin().Indices.push_back(Index);
  return N;
}

inline Value *tensor(Graph &G, const std::string &Name,
                     std::vector<int64_t> Shape) {
  return G.addValue(Name, DType::F32, std::move(Shape),
                    ValueKind::Intermediate);
}

/// x[1,2,4,4] -> Conv(3x3, pad 1, 4 channels) -> BN -> Relu -> y
inline std::unique_ptr<Graph> convBnRelu() {
  auto G = std::make_unique<Graph>("cbr");
  Value *X = G->addValue("x", DType::F32, {1, 2, 4, 4}, ValueKind::Input);
  G->inputs().push_back(X);
  std::vector<float> W(4 * 2 * 9);
  for (size_t I = 0; I < W.size(); ++I)
    W[I] = 0.01f * static_cast<float>(I) - 0.3f;
  Value *Wv = constF32(*G, "w", {4, 2, 3, 3}, W);
  Value *Bv = constF32(*G, "b", {4}, {0.1f, -0.2f, 0.3f, 0.0f});
  Value *C = tensor(*G, "conv", {1, 4, 4, 4});
  Node *Conv = addOp(*G, "Conv", "conv1", {X, Wv, Bv}, {C}, 0);
  Conv->setAttr("pads", std::vector<int64_t>{1, 1, 1, 1});
  Conv->setAttr("kernel_shape", std::vector<int64_t>{3, 3});
  Value *Sc = constF32(*G, "scale", {4}, {1.0f, 2.0f, 0.5f, 1.5f});
  Value *Sh = constF32(*G, "shift", {4}, {0.0f, 0.1f, -0.1f, 0.2f});
  Value *Mu = constF32(*G, "mean", {4}, {0.5f, -0.5f, 0.0f, 1.0f});
  Value *Va = constF32(*G, "var", {4}, {1.0f, 4.0f, 0.25f, 2.0f});
  Value *Bn = tensor(*G, "bn", {1, 4, 4, 4});
  addOp(*G, "BatchNormalization", "bn1", {C, Sc, Sh, Mu, Va}, {Bn}, 1);
  Value *Y = tensor(*G, "y", {1, 4, 4, 4});
  addOp(*G, "Relu", "relu1", {Bn}, {Y}, 2);
  G->outputs().push_back(Y);
  return G;
}

/// A chain of n Relu/Sigmoid nodes on x[1, 256] (alternating).
inline std::unique_ptr<Graph> chain(int N) {
  auto G = std::make_unique<Graph>("chain");
  Value *X = G->addValue("x", DType::F32, {1, 256}, ValueKind::Input);
  G->inputs().push_back(X);
  Value *Cur = X;
  for (int I = 0; I < N; ++I) {
    Value *Y = tensor(*G, fmt::format("t{}", I), {1, 256});
    addOp(*G, I % 2 ? "Sigmoid" : "Softmax", fmt::format("n{}", I), {Cur}, {Y},
          I);
    Cur = Y;
  }
  G->outputs().push_back(Cur);
  return G;
}

} // namespace cuvil::test

#endif
