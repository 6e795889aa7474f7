//===- UnrollBody.cpp - Fresh names and body copies for unrolling ---------===//
#include "frontend/onnx/UnrollBody.h"

namespace cuvil::unroll {

const onnx::TypeProto *BodyUnroller::typeOf(const std::string &Name) const {
  for (const auto *L : {&G.input(), &G.value_info(), &G.output()})
    for (const auto &VI : *L)
      if (VI.name() == Name)
        return &VI.type();
  return nullptr;
}

std::string BodyUnroller::constantInt(int64_t V, bool Vector, int Type) {
  std::string Name = fresh("c");
  auto &N = node("Constant", {}, {Name});
  auto *A = N.add_attribute();
  A->set_name("value");
  A->set_type(onnx::AttributeProto::TENSOR);
  A->mutable_t()->set_data_type(Type);
  if (Vector)
    A->mutable_t()->add_dims(1);
  if (Type == onnx::TensorProto::INT64)
    A->mutable_t()->add_int64_data(V);
  else
    A->mutable_t()->add_int32_data(static_cast<int32_t>(V)); // BOOL too
  return Name;
}

std::string BodyUnroller::gather(const std::string &X, int64_t T,
                                 int64_t Axis) {
  std::string Idx = constantInt(T, false);
  std::string Y = fresh("slice");
  auto &N = node("Gather", {X, Idx}, {Y});
  auto *A = N.add_attribute();
  A->set_name("axis");
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(Axis);
  return Y;
}

std::string BodyUnroller::stack(const std::vector<std::string> &Xs,
                                int64_t Axis) {
  std::vector<std::string> Parts;
  for (const auto &X : Xs) {
    std::string Y = fresh("part");
    if (Opset >= 13) {
      node("Unsqueeze", {X, constantInt(Axis, true)}, {Y});
    } else {
      auto *A = node("Unsqueeze", {X}, {Y}).add_attribute();
      A->set_name("axes");
      A->set_type(onnx::AttributeProto::INTS);
      A->add_ints(Axis);
    }
    Parts.push_back(Y);
  }
  std::string Y = fresh("stacked");
  auto *A = node("Concat", Parts, {Y}).add_attribute();
  A->set_name("axis");
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(Axis);
  return Y;
}

void BodyUnroller::copyBody(const onnx::GraphProto &Body,
                            std::map<std::string, std::string> &Names) {
  for (const auto &BN : Body.node()) {
    if (BN.op_type() == "Constant" && BN.input_size() == 0 &&
        BN.output_size() == 1) {
      auto [It, New] = Hoisted.try_emplace(BN.output(0));
      if (New) {
        onnx::NodeProto C = BN;
        C.set_name(fresh(BN.name().empty() ? "Constant" : BN.name()));
        C.set_output(0, It->second = fresh(BN.output(0)));
        Top->push_back(std::move(C));
      }
      Names[BN.output(0)] = It->second;
      continue;
    }
    Out->push_back(BN);
    rename(Out->back(), Names);
  }
}

void BodyUnroller::rename(onnx::NodeProto &N,
                          std::map<std::string, std::string> &Names) {
  N.set_name(fresh(N.name().empty() ? N.op_type() : N.name()));
  for (auto &In : *N.mutable_input())
    In = bound(Names, In);
  // A branch (checkBody allows only subgraphs without formal inputs) reads
  // the body's values and gets fresh names of its own: each copy is
  // inlined into the one graph.
  for (auto &A : *N.mutable_attribute()) {
    if (A.type() != onnx::AttributeProto::GRAPH)
      continue;
    onnx::GraphProto &Sub = *A.mutable_g();
    Sub.clear_value_info();
    for (auto &SN : *Sub.mutable_node())
      rename(SN, Names);
    for (auto &VI : *Sub.mutable_output())
      VI.set_name(bound(Names, VI.name()));
  }
  for (auto &O : *N.mutable_output())
    if (!O.empty())
      O = Names[O] = fresh(O);
}

bool BodyUnroller::checkBody(const onnx::GraphProto &Body) {
  if (Body.initializer_size() != 0)
    return decline("a body with initializers is not supported");
  for (const auto &BN : Body.node())
    for (const auto &A : BN.attribute()) {
      if (A.type() == onnx::AttributeProto::GRAPHS ||
          (A.type() == onnx::AttributeProto::GRAPH &&
           (A.g().input_size() != 0 || A.g().initializer_size() != 0)))
        return decline("a body with a nested Loop or Scan, or a subgraph "
                       "with initializers, is not supported");
      if (A.type() == onnx::AttributeProto::GRAPH && !checkBody(A.g()))
        return false;
    }
  return true;
}

} // namespace cuvil::unroll
