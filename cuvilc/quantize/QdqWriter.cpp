//===- QdqWriter.cpp - The quantized model as a standard QDQ ONNX model ---===//
#include "quantize/QdqWriter.h"

#include "frontend/onnx/TensorProto.h"
#include "ir/Diagnostic.h"

#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <cstring>
#include <set>

namespace cuvil::quant {
namespace {

/// A name no tensor or node of the graph uses yet.
class Names {
public:
  explicit Names(const onnx::GraphProto &G) {
    for (const auto &T : G.initializer())
      Used.insert(T.name());
    for (const auto &V : G.input())
      Used.insert(V.name());
    for (const auto &N : G.node()) {
      Used.insert(N.name());
      for (const std::string &O : N.output())
        Used.insert(O);
    }
  }
  std::string fresh(const std::string &Base) {
    std::string N = Base;
    for (int I = 1; !Used.insert(N).second; ++I)
      N = fmt::format("{}_{}", Base, I);
    return N;
  }

private:
  std::set<std::string> Used;
};

template <typename T>
void setData(onnx::TensorProto &P, const std::vector<T> &V) {
  std::string Raw(V.size() * sizeof(T), '\0');
  if (!V.empty())
    std::memcpy(Raw.data(), V.data(), Raw.size());
  P.set_raw_data(std::move(Raw));
}

/// A constant of the given type and shape ({} for a scalar).
template <typename T>
void addInit(onnx::GraphProto &G, const std::string &Name, int32_t Type,
             const std::vector<int64_t> &Dims, const std::vector<T> &V) {
  onnx::TensorProto &P = *G.add_initializer();
  P.set_name(Name);
  P.set_data_type(Type);
  for (int64_t D : Dims)
    P.add_dims(D);
  setData(P, V);
}

onnx::NodeProto makeNode(const std::string &Op, const std::string &Name,
                         const std::vector<std::string> &In,
                         const std::string &Out, int64_t Axis = -1) {
  onnx::NodeProto N;
  N.set_op_type(Op);
  N.set_name(Name);
  for (const std::string &I : In)
    N.add_input(I);
  N.add_output(Out);
  if (Axis >= 0) {
    onnx::AttributeProto &A = *N.add_attribute();
    A.set_name("axis");
    A.set_type(onnx::AttributeProto::INT);
    A.set_i(Axis);
  }
  return N;
}

/// The scale and zero-point initializers of one quantized activation.
struct ActParams {
  QParams Q;
  std::string Scale, ZeroPoint;
};

class Writer {
public:
  Writer(const onnx::ModelProto &M, const QuantPlan &P,
         const std::map<std::string, Range> &Ranges)
      : Out(M), P(P), Ranges(Ranges), G(*Out.mutable_graph()), N(G) {}

  llvm::Expected<onnx::ModelProto> run(const std::string &Description);

private:
  llvm::Error activationParams();
  llvm::Error weights(const QuantNode &Q, onnx::NodeProto &Node);
  llvm::Expected<std::vector<float>> floatData(const std::string &Name,
                                               std::vector<int64_t> &Dims);
  void quantDequant(const std::string &From, const std::string &To,
                    const ActParams &A, std::vector<onnx::NodeProto> &Nodes);

  onnx::ModelProto Out;
  const QuantPlan &P;
  const std::map<std::string, Range> &Ranges;
  onnx::GraphProto &G;
  Names N;
  std::map<std::string, ActParams> Params;
  std::vector<onnx::NodeProto> Front; ///< Weight DQs, graph-input Q/DQs.
  std::set<std::string> Replaced;     ///< Float initializers now unused.
};

llvm::Error Writer::activationParams() {
  for (const std::string &T : P.Tensors) {
    auto Shared = P.Shared.find(T);
    if (Shared != P.Shared.end()) {
      Params[T] = Params.at(Shared->second);
      continue;
    }
    auto R = Ranges.find(T);
    if (R == Ranges.end())
      return makeError("internal error: tensor '{}' has no calibrated range",
                       T);
    ActParams A;
    A.Q = quant::activationParams(R->second, /*Signed=*/false);
    A.Scale = N.fresh(T + "_scale");
    A.ZeroPoint = N.fresh(T + "_zero_point");
    addInit(G, A.Scale, onnx::TensorProto::FLOAT, {}, std::vector{A.Q.Scale});
    addInit(G, A.ZeroPoint, onnx::TensorProto::UINT8, {},
            std::vector{static_cast<uint8_t>(A.Q.ZeroPoint)});
    Params[T] = A;
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<float>>
Writer::floatData(const std::string &Name, std::vector<int64_t> &Dims) {
  for (const auto &T : G.initializer()) {
    if (T.name() != Name)
      continue;
    int64_t Count = 1;
    Dims.assign(T.dims().begin(), T.dims().end());
    for (int64_t D : Dims)
      Count *= D;
    auto Bytes = tensorBytes(T, DType::F32, Count);
    if (!Bytes)
      return Bytes.takeError();
    std::vector<float> V(Count);
    std::memcpy(V.data(), Bytes->data(), Bytes->size());
    return V;
  }
  return makeError("internal error: no initializer '{}'", Name);
}

void Writer::quantDequant(const std::string &From, const std::string &To,
                          const ActParams &A,
                          std::vector<onnx::NodeProto> &Nodes) {
  std::string Q = N.fresh(To + "_quantized");
  Nodes.push_back(makeNode("QuantizeLinear", N.fresh(To + "_QuantizeLinear"),
                           {From, A.Scale, A.ZeroPoint}, Q));
  Nodes.push_back(makeNode("DequantizeLinear",
                           N.fresh(To + "_DequantizeLinear"),
                           {Q, A.Scale, A.ZeroPoint}, To));
}

llvm::Error Writer::weights(const QuantNode &Q, onnx::NodeProto &Node) {
  std::vector<int64_t> Dims;
  auto W = floatData(Q.Weight, Dims);
  if (!W)
    return W.takeError();
  // Per output channel from opset 13 (DequantizeLinear's axis); one
  // scale for the whole tensor before.
  int64_t Channels = Dims[Q.WeightAxis];
  ChannelWeights CW =
      P.PerChannel ? quantizeWeights(W->data(), Dims, Q.WeightAxis)
                   : quantizeWeights(W->data(), {1, int64_t(W->size())}, 0);
  int64_t Axis = P.PerChannel ? Q.WeightAxis : -1;
  std::vector<int64_t> ScaleDims;
  if (P.PerChannel)
    ScaleDims = {Channels};
  std::string Wq = N.fresh(Q.Weight + "_quantized");
  std::string Ws = N.fresh(Q.Weight + "_scale");
  std::string Wz = N.fresh(Q.Weight + "_zero_point");
  std::string Wd = N.fresh(Q.Weight + "_dequantized");
  addInit(G, Wq, onnx::TensorProto::INT8, Dims, CW.Values);
  addInit(G, Ws, onnx::TensorProto::FLOAT, ScaleDims, CW.Scales);
  addInit(G, Wz, onnx::TensorProto::INT8, ScaleDims,
          std::vector<int8_t>(CW.Scales.size(), 0));
  Front.push_back(makeNode("DequantizeLinear", N.fresh(Wd + "_node"),
                           {Wq, Ws, Wz}, Wd, Axis));
  Node.set_input(1, Wd);
  Replaced.insert(Q.Weight);
  if (Q.Bias.empty())
    return llvm::Error::success();

  std::vector<int64_t> BDims;
  auto B = floatData(Q.Bias, BDims);
  if (!B)
    return B.takeError();
  if (static_cast<int64_t>(B->size()) != Channels)
    return llvm::Error::success(); // a broadcast bias: stays float
  float XScale = Params.at(Q.Inputs.front()).Q.Scale;
  std::vector<float> WScales = CW.Scales;
  if (!P.PerChannel)
    WScales.assign(Channels, CW.Scales.front());
  std::vector<int32_t> Bq = quantizeBias(B->data(), B->size(), XScale, WScales);
  std::vector<float> BScales;
  for (size_t C = 0; C < CW.Scales.size(); ++C)
    BScales.push_back(XScale * CW.Scales[C]);
  std::string Bqn = N.fresh(Q.Bias + "_quantized");
  std::string Bs = N.fresh(Q.Bias + "_scale");
  std::string Bz = N.fresh(Q.Bias + "_zero_point");
  std::string Bd = N.fresh(Q.Bias + "_dequantized");
  addInit(G, Bqn, onnx::TensorProto::INT32, BDims, Bq);
  addInit(G, Bs, onnx::TensorProto::FLOAT, ScaleDims, BScales);
  addInit(G, Bz, onnx::TensorProto::INT32, ScaleDims,
          std::vector<int32_t>(BScales.size(), 0));
  Front.push_back(makeNode("DequantizeLinear", N.fresh(Bd + "_node"),
                           {Bqn, Bs, Bz}, Bd, P.PerChannel ? 0 : -1));
  Node.set_input(2, Bd);
  Replaced.insert(Q.Bias);
  return llvm::Error::success();
}

/// The names the nodes of G (and of their subgraphs) read.
void readNames(const onnx::GraphProto &G, std::set<std::string> &Read) {
  for (const auto &Node : G.node()) {
    for (const std::string &I : Node.input())
      Read.insert(I);
    for (const auto &A : Node.attribute()) {
      if (A.has_g())
        readNames(A.g(), Read);
      for (const auto &Sub : A.graphs())
        readNames(Sub, Read);
    }
  }
  for (const auto &O : G.output())
    Read.insert(O.name());
}

llvm::Expected<onnx::ModelProto> Writer::run(const std::string &Description) {
  if (auto E = activationParams())
    return E;
  std::set<std::string> GraphInputs;
  for (const auto &V : G.input())
    GraphInputs.insert(V.name());
  // Graph inputs keep their names: their readers read the DQ's output.
  std::map<std::string, std::string> InputAlias;
  std::set<std::string> Pending(P.Tensors.begin(), P.Tensors.end());
  for (const std::string &T : P.Tensors)
    if (GraphInputs.count(T)) {
      std::string D = N.fresh(T + "_dequantized");
      quantDequant(T, D, Params.at(T), Front);
      InputAlias[T] = D;
      Pending.erase(T);
    }
  std::map<int, const QuantNode *> ByIndex;
  for (const QuantNode &Q : P.Nodes)
    ByIndex[Q.Index] = &Q;

  std::vector<onnx::NodeProto> Nodes;
  for (int I = 0; I < G.node_size(); ++I) {
    onnx::NodeProto Node = G.node(I);
    for (int K = 0; K < Node.input_size(); ++K)
      if (auto It = InputAlias.find(Node.input(K)); It != InputAlias.end())
        Node.set_input(K, It->second);
    if (auto It = ByIndex.find(I);
        It != ByIndex.end() && !It->second->Weight.empty())
      if (auto E = weights(*It->second, Node))
        return E;
    // A quantized output: the node writes it under a new name, the Q/DQ
    // pair gives it back under its own.
    std::vector<onnx::NodeProto> After;
    for (int K = 0; K < Node.output_size(); ++K) {
      std::string T = Node.output(K);
      if (!Pending.erase(T))
        continue;
      std::string Pre = N.fresh(T + "_prequant");
      Node.set_output(K, Pre);
      quantDequant(Pre, T, Params.at(T), After);
    }
    Nodes.push_back(std::move(Node));
    for (auto &A : After)
      Nodes.push_back(std::move(A));
  }
  if (!Pending.empty())
    return makeError("internal error: tensor '{}' is not produced by a node "
                     "of the main graph",
                     *Pending.begin());
  G.clear_node();
  for (auto &Node : Front)
    *G.add_node() = std::move(Node);
  for (auto &Node : Nodes)
    *G.add_node() = std::move(Node);

  // The float weights no reader is left for.
  std::set<std::string> Read;
  readNames(G, Read);
  auto *Inits = G.mutable_initializer();
  for (int I = Inits->size() - 1; I >= 0; --I)
    if (Replaced.count(Inits->Get(I).name()) &&
        !Read.count(Inits->Get(I).name()))
      Inits->DeleteSubrange(I, 1);
  auto *Ins = G.mutable_input();
  for (int I = Ins->size() - 1; I >= 0; --I)
    if (Replaced.count(Ins->Get(I).name()) && !Read.count(Ins->Get(I).name()))
      Ins->DeleteSubrange(I, 1);

  auto *Meta = Out.add_metadata_props();
  Meta->set_key("cuvil.quantization");
  Meta->set_value(Description);
  return std::move(Out);
}

} // namespace

llvm::Expected<onnx::ModelProto>
writeQdqModel(const onnx::ModelProto &M, const QuantPlan &P,
              const std::map<std::string, Range> &Ranges,
              const std::string &Description) {
  Writer W(M, P, Ranges);
  return W.run(Description);
}

} // namespace cuvil::quant
