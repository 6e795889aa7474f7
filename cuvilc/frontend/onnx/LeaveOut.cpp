//===- LeaveOut.cpp - A model run without some optional inputs ------------===//
#include "frontend/onnx/LeaveOut.h"

#include "ir/Diagnostic.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <limits>

namespace cuvil {

llvm::Expected<std::string>
leaveOutInputs(std::string_view Bytes, const std::vector<std::string> &Names) {
  onnx::ModelProto M;
  if (Bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !M.ParseFromArray(Bytes.data(), static_cast<int>(Bytes.size())))
    return makeError("not an ONNX model (the file does not parse as an ONNX "
                     "ModelProto)");
  auto *G = M.mutable_graph();
  std::vector<onnx::NodeProto> Absent;
  for (const std::string &Name : Names) {
    auto It = std::find_if(G->input().begin(), G->input().end(),
                           [&](const auto &In) { return In.name() == Name; });
    if (It == G->input().end())
      return makeError("the model has no input '{}'", Name);
    if (!It->type().has_optional_type())
      return makeError("input '{}' is not optional: it cannot be left out",
                       Name);
    onnx::NodeProto N;
    N.set_op_type("Optional");
    N.set_name("cuvil_absent_" + Name);
    N.add_output(Name);
    auto *A = N.add_attribute();
    A->set_name("type");
    A->set_type(onnx::AttributeProto::TYPE_PROTO);
    *A->mutable_tp() = It->type().optional_type().elem_type();
    Absent.push_back(std::move(N));
    G->mutable_input()->erase(It);
  }
  // The Optional nodes go first: they produce what later nodes read.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> Nodes;
  for (onnx::NodeProto &N : Absent)
    *Nodes.Add() = std::move(N);
  for (const onnx::NodeProto &N : G->node())
    *Nodes.Add() = N;
  G->mutable_node()->Swap(&Nodes);
  return M.SerializeAsString();
}

} // namespace cuvil
