//===- Prepare.cpp - The float model made ready for quantization ----------===//
#include "quantize/Prepare.h"

#include "frontend/onnx/TensorProto.h"
#include "ir/Diagnostic.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace cuvil::quant {
namespace {

onnx::TensorProto *findInit(onnx::GraphProto &G, const std::string &Name) {
  for (auto &T : *G.mutable_initializer())
    if (T.name() == Name)
      return &T;
  return nullptr;
}

int64_t count(const onnx::TensorProto &T) {
  int64_t N = 1;
  for (int64_t D : T.dims())
    N *= D;
  return N;
}

/// The float32 values of T, or nothing when it is not float32.
std::optional<std::vector<float>> floats(const onnx::TensorProto &T) {
  if (T.data_type() != onnx::TensorProto::FLOAT)
    return std::nullopt;
  auto B = tensorBytes(T, DType::F32, count(T));
  if (!B) {
    llvm::consumeError(B.takeError());
    return std::nullopt;
  }
  std::vector<float> V(count(T));
  std::memcpy(V.data(), B->data(), B->size());
  return V;
}

void store(onnx::TensorProto &T, const std::vector<float> &V) {
  T.clear_float_data();
  T.clear_raw_data();
  T.set_raw_data(std::string(reinterpret_cast<const char *>(V.data()),
                             V.size() * sizeof(float)));
}

} // namespace

llvm::Expected<int> foldConvBatchNorm(onnx::ModelProto &M) {
  onnx::GraphProto &G = *M.mutable_graph();
  std::map<std::string, int> Readers;
  for (const auto &N : G.node())
    for (const std::string &I : N.input())
      ++Readers[I];
  std::set<std::string> Outputs;
  for (const auto &O : G.output())
    Outputs.insert(O.name());
  std::map<std::string, int> ProducerOf;
  for (int I = 0; I < G.node_size(); ++I)
    for (const std::string &O : G.node(I).output())
      ProducerOf[O] = I;

  std::set<int> Dead;
  std::set<std::string> Params; // the folded BatchNormalizations' constants
  int Folded = 0;
  for (int I = 0; I < G.node_size(); ++I) {
    const onnx::NodeProto &BN = G.node(I);
    if (BN.op_type() != "BatchNormalization" || BN.input_size() != 5 ||
        BN.output_size() != 1 ||
        (!BN.domain().empty() && BN.domain() != "ai.onnx"))
      continue;
    auto P = ProducerOf.find(BN.input(0));
    if (P == ProducerOf.end() || Readers[BN.input(0)] != 1 ||
        Outputs.count(BN.input(0)))
      continue;
    onnx::NodeProto &Conv = *G.mutable_node(P->second);
    if (Conv.op_type() != "Conv" || Conv.input_size() < 2 ||
        Readers[Conv.input(1)] != 1)
      continue;
    float Eps = 1e-5f;
    for (const auto &A : BN.attribute())
      if (A.name() == "epsilon")
        Eps = A.f();
    onnx::TensorProto *W = findInit(G, Conv.input(1));
    onnx::TensorProto *B = Conv.input_size() > 2 && !Conv.input(2).empty()
                               ? findInit(G, Conv.input(2))
                               : nullptr;
    if (!W || W->dims_size() < 1 ||
        (Conv.input_size() > 2 && !Conv.input(2).empty() &&
         (!B || Readers[Conv.input(2)] != 1)))
      continue;
    std::optional<std::vector<float>> Par[4];
    bool Ok = true;
    for (int K = 0; K < 4; ++K) {
      const onnx::TensorProto *T = findInit(G, BN.input(K + 1));
      Par[K] = T ? floats(*T) : std::nullopt;
      Ok &= Par[K] && static_cast<int64_t>(Par[K]->size()) == W->dims(0);
    }
    auto Wv = floats(*W);
    std::optional<std::vector<float>> Bv =
        B ? floats(*B) : std::vector<float>(W->dims(0), 0.0f);
    if (!Ok || !Wv || !Bv || static_cast<int64_t>(Bv->size()) != W->dims(0))
      continue;
    const auto &Gamma = *Par[0], &Beta = *Par[1], &Mean = *Par[2],
               &Var = *Par[3];
    int64_t Channels = W->dims(0), Per = count(*W) / Channels;
    for (int64_t C = 0; C < Channels; ++C) {
      // In double, then rounded once, as the float compiler's fold does.
      double F = double(Gamma[C]) / std::sqrt(double(Var[C]) + double(Eps));
      for (int64_t K = 0; K < Per; ++K)
        (*Wv)[C * Per + K] = static_cast<float>((*Wv)[C * Per + K] * F);
      (*Bv)[C] = static_cast<float>((double((*Bv)[C]) - Mean[C]) * F + Beta[C]);
    }
    store(*W, *Wv);
    if (B) {
      store(*B, *Bv);
    } else {
      onnx::TensorProto &NB = *G.add_initializer();
      NB.set_name(Conv.output(0) + "_folded_bias");
      NB.set_data_type(onnx::TensorProto::FLOAT);
      NB.add_dims(Channels);
      store(NB, *Bv);
      while (Conv.input_size() < 3)
        Conv.add_input("");
      Conv.set_input(2, NB.name());
    }
    Conv.set_output(0, BN.output(0));
    for (int K = 1; K < 5; ++K)
      if (--Readers[BN.input(K)] == 0)
        Params.insert(BN.input(K));
    Dead.insert(I);
    ++Folded;
  }
  if (Dead.empty())
    return 0;
  auto *Nodes = G.mutable_node();
  for (int I = Nodes->size() - 1; I >= 0; --I)
    if (Dead.count(I))
      Nodes->DeleteSubrange(I, 1);
  auto *Inits = G.mutable_initializer();
  for (int I = Inits->size() - 1; I >= 0; --I)
    if (Params.count(Inits->Get(I).name()))
      Inits->DeleteSubrange(I, 1);
  auto *Ins = G.mutable_input();
  for (int I = Ins->size() - 1; I >= 0; --I)
    if (Params.count(Ins->Get(I).name()))
      Ins->DeleteSubrange(I, 1);
  return Folded;
}

} // namespace cuvil::quant
