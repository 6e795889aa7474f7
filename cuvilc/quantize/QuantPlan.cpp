//===- QuantPlan.cpp - What post-training quantization changes -----------===//
#include "quantize/QuantPlan.h"

#include "frontend/onnx/Schemas.h"
#include "ir/Diagnostic.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>

namespace cuvil::quant {
namespace {

/// What ONNX's shape inference knows of a tensor.
struct TensorType {
  int32_t Elem = 0;
  std::vector<int64_t> Dims; ///< -1 for a dimension it does not know.
  bool Ranked = false;
};

TensorType typeOf(const onnx::TypeProto &T) {
  TensorType R;
  if (!T.has_tensor_type())
    return R;
  R.Elem = T.tensor_type().elem_type();
  if (!T.tensor_type().has_shape())
    return R;
  R.Ranked = true;
  for (const auto &D : T.tensor_type().shape().dim())
    R.Dims.push_back(D.has_dim_value() ? D.dim_value() : -1);
  return R;
}

bool fullyKnown(const TensorType &T) {
  if (!T.Ranked)
    return false;
  for (int64_t D : T.Dims)
    if (D < 0)
      return false;
  return true;
}

/// The facts about M's main graph the selection needs.
class GraphFacts {
public:
  explicit GraphFacts(const onnx::ModelProto &M) : G(M.graph()) {
    for (const auto &T : G.initializer())
      Inits[T.name()] = &T;
    for (const auto &V : G.output())
      Outputs.insert(V.name());
    for (const auto &V : G.input())
      if (!Inits.count(V.name()))
        Inputs.insert(V.name());
    for (int I = 0; I < G.node_size(); ++I)
      for (const std::string &In : G.node(I).input())
        if (!In.empty())
          Consumers[In].push_back(I);
    // Types: a copy of the model through ONNX's inference, lenient
    // (what it cannot infer just stays float-only-if-known).
    onnx::ModelProto Copy = M;
    try {
      onnx::ShapeInferenceOptions SO(/*check_type=*/false, /*strict=*/0,
                                     /*data_prop=*/true);
      onnx::shape_inference::InferShapes(Copy, &schemaRegistry(), SO);
    } catch (const std::exception &) { // NOLINT(bugprone-empty-catch)
      // Deliberate: what inference typed before it stopped is kept, the
      // rest comes from the inputs and outputs.
    }
    const onnx::GraphProto &CG = Copy.graph();
    for (const auto &V : CG.value_info())
      Types[V.name()] = typeOf(V.type());
    for (const auto &V : CG.input())
      Types[V.name()] = typeOf(V.type());
    for (const auto &V : CG.output())
      Types[V.name()] = typeOf(V.type());
    for (const auto &V : CG.value_info())
      Infos[V.name()] = V;
    for (const auto &V : CG.output())
      Infos[V.name()] = V;
  }

  const onnx::GraphProto &G;
  std::map<std::string, const onnx::TensorProto *> Inits;
  std::set<std::string> Inputs, Outputs;
  std::map<std::string, std::vector<int>> Consumers;
  std::map<std::string, TensorType> Types;
  std::map<std::string, onnx::ValueInfoProto> Infos;

  const onnx::TensorProto *init(const std::string &N) const {
    auto It = Inits.find(N);
    return It == Inits.end() ? nullptr : It->second;
  }
  /// A float activation: computed at run time, float32 by inference.
  bool floatActivation(const std::string &N) const {
    if (N.empty() || Inits.count(N))
      return false;
    auto It = Types.find(N);
    return It != Types.end() && It->second.Elem == onnx::TensorProto::FLOAT;
  }
  const TensorType *type(const std::string &N) const {
    auto It = Types.find(N);
    return It == Types.end() ? nullptr : &It->second;
  }
  size_t consumers(const std::string &N) const {
    auto It = Consumers.find(N);
    return It == Consumers.end() ? 0 : It->second.size();
  }
};

std::string nodeName(const onnx::NodeProto &N) {
  if (!N.name().empty())
    return N.name();
  return N.output_size() ? N.output(0) : N.op_type();
}

const onnx::AttributeProto *attr(const onnx::NodeProto &N, const char *Name) {
  for (const auto &A : N.attribute())
    if (A.name() == Name)
      return &A;
  return nullptr;
}

int64_t intAttr(const onnx::NodeProto &N, const char *Name, int64_t Def) {
  const onnx::AttributeProto *A = attr(N, Name);
  return A ? A->i() : Def;
}

float floatAttr(const onnx::NodeProto &N, const char *Name, float Def) {
  const onnx::AttributeProto *A = attr(N, Name);
  return A ? A->f() : Def;
}

/// A Relu, or a Clip whose bounds are constant: it becomes the integer
/// kernel's output clamp.
bool isClamp(const onnx::NodeProto &N, const GraphFacts &F) {
  if (N.op_type() == "Relu")
    return true;
  if (N.op_type() != "Clip")
    return false;
  for (int I = 1; I < N.input_size(); ++I)
    if (!N.input(I).empty() && !F.init(N.input(I)))
      return false;
  return true;
}

/// The tensor after Y's Relu/Clip, when Y feeds only that and is not a
/// graph output; Y otherwise.
std::string absorbClamp(const std::string &Y, const GraphFacts &F) {
  if (F.Outputs.count(Y) || F.consumers(Y) != 1)
    return Y;
  const onnx::NodeProto &C = F.G.node(F.Consumers.at(Y).front());
  if (!isClamp(C, F) || C.input(0) != Y || C.output_size() != 1)
    return Y;
  return C.output(0);
}

bool isFloatInit(const onnx::TensorProto *T) {
  return T && T->data_type() == onnx::TensorProto::FLOAT;
}

/// Why N (Conv, Gemm, MatMul) cannot be quantized, or "" when Q is filled.
std::string selectProduct(const onnx::NodeProto &N, const GraphFacts &F,
                          QuantNode &Q) {
  const std::string &Op = N.op_type();
  if (N.input_size() < 2 || !F.floatActivation(N.input(0)))
    return "its input is not a float32 activation";
  const onnx::TensorProto *W = F.init(N.input(1));
  if (!isFloatInit(W))
    return "its weight is not a constant float32 tensor";
  Q.Inputs = {N.input(0)};
  Q.Weight = N.input(1);
  std::string B = N.input_size() > 2 ? N.input(2) : "";
  if (Op == "Conv") {
    if (W->dims_size() < 3)
      return "its weight has fewer than 3 dimensions";
    Q.WeightAxis = 0;
  } else if (Op == "Gemm") {
    if (intAttr(N, "transA", 0) != 0)
      return "transA is set";
    if (W->dims_size() != 2)
      return "its weight is not a matrix";
    Q.WeightAxis = intAttr(N, "transB", 0) ? 0 : 1;
    // An int32 bias of scale x_scale * w_scale is only exact for
    // alpha = beta = 1 and one value per output; else it stays float
    // (lower-qdq folds it).
    int64_t Outs = W->dims(Q.WeightAxis);
    const onnx::TensorProto *C = B.empty() ? nullptr : F.init(B);
    if (!isFloatInit(C) || C->dims_size() != 1 || C->dims(0) != Outs ||
        floatAttr(N, "alpha", 1) != 1 || floatAttr(N, "beta", 1) != 1)
      B.clear();
  } else { // MatMul
    if (W->dims_size() != 2)
      return "its weight is not a matrix";
    Q.WeightAxis = 1;
  }
  if (!B.empty() && isFloatInit(F.init(B)) && F.init(B)->dims_size() == 1)
    Q.Bias = B;
  Q.Output = absorbClamp(N.output(0), F);
  return "";
}

/// Views and selections that move values: on 8-bit data when their input
/// is quantized (the output takes the input's parameters).
bool movesValues(const std::string &Op) {
  static const std::set<std::string> Ops = {
      "MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze"};
  return Ops.count(Op) != 0;
}

int64_t defaultOpset(const onnx::ModelProto &M) {
  for (const auto &O : M.opset_import())
    if (O.domain().empty() || O.domain() == "ai.onnx")
      return O.version();
  return 0;
}

} // namespace

llvm::Expected<QuantPlan> planQuantization(const onnx::ModelProto &M,
                                           const PlanOptions &O) {
  QuantPlan P;
  P.Opset = defaultOpset(M);
  if (P.Opset < 10)
    return makeError("the model's opset is {}: QuantizeLinear and "
                     "DequantizeLinear need opset 10 or later",
                     P.Opset);
  P.PerChannel = P.Opset >= 13;
  GraphFacts F(M);
  std::set<std::string> Quantized; // tensors with a Q/DQ pair
  auto AddTensor = [&](const std::string &T) {
    if (Quantized.insert(T).second)
      P.Tensors.push_back(T);
  };
  std::set<std::string> Unused = O.KeepFloat;
  for (int I = 0; I < F.G.node_size(); ++I) {
    const onnx::NodeProto &N = F.G.node(I);
    QuantNode Q;
    Q.Index = I;
    Q.Name = nodeName(N);
    Q.Op = N.op_type();
    bool Keep = Unused.erase(Q.Name) != 0 || O.KeepFloat.count(Q.Name);
    if (!N.domain().empty() && N.domain() != "ai.onnx")
      continue;
    std::string Why;
    if (Q.Op == "Conv" || Q.Op == "Gemm" || Q.Op == "MatMul") {
      Why = selectProduct(N, F, Q);
    } else if (Q.Op == "Add" && N.input_size() == 2) {
      const TensorType *A = F.type(N.input(0)), *B = F.type(N.input(1));
      if (!F.floatActivation(N.input(0)) || !F.floatActivation(N.input(1)))
        continue; // a bias or scalar add: float, as its neighbours decide
      if (!A || !B || !fullyKnown(*A) || A->Dims != B->Dims)
        Why = "its operands do not have one known shape";
      Q.Inputs = {N.input(0), N.input(1)};
      Q.Output = absorbClamp(N.output(0), F);
    } else if (Q.Op == "GlobalAveragePool") {
      if (!F.floatActivation(N.input(0)))
        continue;
      Q.Inputs = {N.input(0)};
      Q.Output = N.output(0);
    } else if (movesValues(Q.Op) && N.output_size() >= 1 &&
               Quantized.count(N.input(0)) && !Keep &&
               F.floatActivation(N.output(0))) {
      // The output takes its input's parameters; MaxPool's indices
      // output (a second one) keeps it float.
      if (N.output_size() == 1 && !Quantized.count(N.output(0))) {
        std::string Src = N.input(0);
        while (P.Shared.count(Src))
          Src = P.Shared.at(Src);
        P.Shared[N.output(0)] = Src;
        AddTensor(N.output(0));
      }
      continue;
    } else {
      continue;
    }
    if (!Why.empty()) {
      P.Notes.push_back(
          fmt::format("node '{}' ({}) stays float: {}", Q.Name, Q.Op, Why));
      continue;
    }
    if (Keep)
      continue; // the report lists it with its reason
    for (const std::string &T : Q.Inputs)
      AddTensor(T);
    AddTensor(Q.Output);
    P.Nodes.push_back(std::move(Q));
  }
  if (!Unused.empty())
    return makeError("--keep-float: the model has no node '{}'",
                     *Unused.begin());
  for (const std::string &T : P.Tensors)
    if (!P.Shared.count(T))
      P.Calibrated.push_back(T);
  // From each graph output up through nodes of one activation input
  // (Softmax, Sigmoid, a float island) to the first quantized tensor.
  std::map<std::string, int> Producer;
  for (int I = 0; I < F.G.node_size(); ++I)
    for (const std::string &O : F.G.node(I).output())
      Producer[O] = I;
  for (const std::string &Out : F.Outputs) {
    std::string T = Out;
    while (!Quantized.count(T) && Producer.count(T)) {
      const onnx::NodeProto &N = F.G.node(Producer.at(T));
      std::vector<std::string> Acts;
      for (const std::string &In : N.input())
        if (!In.empty() && !F.Inits.count(In))
          Acts.push_back(In);
      if (Acts.size() != 1)
        break;
      T = Acts.front();
    }
    if (Quantized.count(T))
      P.OutputSide.insert(T);
  }
  return P;
}

llvm::Expected<std::string> calibrationModel(const onnx::ModelProto &M,
                                             const QuantPlan &P) {
  GraphFacts F(M);
  onnx::ModelProto C = M;
  onnx::GraphProto &G = *C.mutable_graph();
  for (const std::string &T : P.Tensors) {
    if (F.Inputs.count(T) || F.Outputs.count(T))
      continue;
    auto It = F.Infos.find(T);
    if (It == F.Infos.end())
      return makeError("internal error: no type for tensor '{}'", T);
    *G.add_output() = It->second;
  }
  std::string Bytes;
  if (!C.SerializeToString(&Bytes))
    return makeError("cannot serialise the calibration model (over 2 GiB?)");
  return Bytes;
}

} // namespace cuvil::quant
