//===- OpsetsTest.cpp - Version checks and cuvil's schemas of opsets 18-21 ===//
#include "frontend/onnx/Opsets.h"
#include "frontend/onnx/Schemas.h"

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

using namespace cuvil;

namespace {

std::string message(llvm::Error E) {
  return E ? llvm::toString(std::move(E)) : "";
}

onnx::ModelProto model(int64_t Opset, int64_t IR = 8) {
  onnx::ModelProto M;
  M.set_ir_version(IR);
  M.add_opset_import()->set_version(Opset);
  M.mutable_graph()->set_name("g");
  return M;
}

void addTensor(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> *To,
               const std::string &Name, std::vector<int64_t> Dims) {
  auto *V = To->Add();
  V->set_name(Name);
  auto *T = V->mutable_type()->mutable_tensor_type();
  T->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t D : Dims)
    T->mutable_shape()->add_dim()->set_dim_value(D);
}

void addInts(onnx::GraphProto &G, const std::string &Name,
             std::vector<int64_t> V) {
  auto *T = G.add_initializer();
  T->set_name(Name);
  T->set_data_type(onnx::TensorProto::INT64);
  T->add_dims(static_cast<int64_t>(V.size()));
  for (int64_t X : V)
    T->add_int64_data(X);
}

onnx::NodeProto *addNode(onnx::GraphProto &G, const std::string &Op,
                         std::vector<std::string> In,
                         std::vector<std::string> Out) {
  auto *N = G.add_node();
  N->set_op_type(Op);
  N->set_name(Op);
  for (auto &I : In)
    N->add_input(I);
  for (auto &O : Out)
    N->add_output(O);
  return N;
}

/// The inferred dims of value Name (-1 for an open one), or {-2} if none.
std::vector<int64_t> inferredDims(const onnx::ModelProto &M,
                                  const std::string &Name) {
  for (const auto &V : M.graph().value_info())
    if (V.name() == Name) {
      std::vector<int64_t> D;
      for (const auto &X : V.type().tensor_type().shape().dim())
        D.push_back(X.has_dim_value() ? X.dim_value() : -1);
      return D;
    }
  return {-2};
}

void infer(onnx::ModelProto &M) {
  checkModel(M, schemaRegistry());
  onnx::ShapeInferenceOptions SO(/*check_type=*/true, /*strict=*/1,
                                 /*data_prop=*/true);
  onnx::shape_inference::InferShapes(M, &schemaRegistry(), SO);
}

TEST(Opsets, RegistryOverlaysCuvilSchemasFromOpset18) {
  const onnx::ISchemaRegistry &R = schemaRegistry();
  ASSERT_NE(R.GetSchema("ReduceMax", 13, ""), nullptr);
  EXPECT_EQ(R.GetSchema("ReduceMax", 17, "")->SinceVersion(), 13);
  EXPECT_EQ(R.GetSchema("ReduceMax", 18, "")->SinceVersion(), 18);
  EXPECT_EQ(R.GetSchema("ReduceMax", 19, "")->SinceVersion(), 18);
  EXPECT_EQ(R.GetSchema("ReduceMax", 21, "")->SinceVersion(), 20);
  EXPECT_EQ(R.GetSchema("ReduceMax", 18, "ai.onnx")->SinceVersion(), 18);
  EXPECT_EQ(R.GetSchema("ReduceSum", 18, "")->SinceVersion(), 13);
  EXPECT_EQ(R.GetSchema("Gelu", 19, ""), nullptr);
  EXPECT_EQ(R.GetSchema("Gelu", 20, "")->SinceVersion(), 20);
  EXPECT_EQ(R.GetSchema("GroupNormalization", 20, "")->SinceVersion(), 18);
  EXPECT_EQ(R.GetSchema("GroupNormalization", 21, "")->SinceVersion(), 21);
  EXPECT_EQ(R.GetSchema("Relu", 21, "")->SinceVersion(), 14);
  EXPECT_EQ(R.GetSchema("DeformConv", 21, ""), nullptr);
  // ONNX's own registry is untouched.
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Gelu", 21, ""), nullptr);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("ReduceMax", 21, "")->SinceVersion(),
            13);
}

TEST(Opsets, VersionsOutsideTheRangeAreRefused) {
  EXPECT_EQ(message(checkVersions(model(21, 10))), "");
  EXPECT_EQ(message(checkVersions(model(1, 3))), "");
  EXPECT_EQ(message(checkVersions(model(22))),
            "the model imports opset 22 of the default ONNX domain; cuvil "
            "supports opsets 1 to 21");
  EXPECT_EQ(message(checkVersions(model(13, 11))),
            "the model has IR version 11; cuvil reads IR versions 1 to 10");
  onnx::ModelProto M = model(18);
  auto *Ml = M.add_opset_import();
  Ml->set_domain("ai.onnx.ml");
  Ml->set_version(6);
  EXPECT_EQ(message(checkVersions(M)),
            "the model imports opset 6 of domain 'ai.onnx.ml'; cuvil supports "
            "opsets 1 to 5");
  Ml->set_version(5);
  auto *Custom = M.add_opset_import();
  Custom->set_domain("com.acme");
  Custom->set_version(1000); // custom domains are not versioned by cuvil
  EXPECT_EQ(message(checkVersions(M)), "");
}

TEST(Opsets, InferenceOfSplitPadAndReduceAtOpset18) {
  onnx::ModelProto M = model(18);
  auto &G = *M.mutable_graph();
  addTensor(G.mutable_input(), "x", {2, 7, 5});
  auto *Split = addNode(G, "Split", {"x"}, {"a", "b", "c"});
  auto *A = Split->add_attribute();
  A->set_name("num_outputs");
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(3);
  A = Split->add_attribute();
  A->set_name("axis");
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(1);
  addInts(G, "pads", {1, 2, 0, 1});
  addInts(G, "axes", {1, -1});
  addNode(G, "Pad", {"x", "pads", "", "axes"}, {"p"});
  addInts(G, "raxes", {2});
  addNode(G, "ReduceMax", {"x", "raxes"}, {"r"});
  addTensor(G.mutable_output(), "r", {2, 7, 1});
  infer(M);
  EXPECT_EQ(inferredDims(M, "a"), (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(inferredDims(M, "c"), (std::vector<int64_t>{2, 1, 5}));
  EXPECT_EQ(inferredDims(M, "p"), (std::vector<int64_t>{2, 8, 8}));
}

TEST(Opsets, InferenceOfCol2ImResizeAndPoolAtOpset19) {
  onnx::ModelProto M = model(19, 9);
  auto &G = *M.mutable_graph();
  addTensor(G.mutable_input(), "cols", {1, 8, 6});
  addTensor(G.mutable_input(), "img", {1, 2, 8, 8});
  addInts(G, "image", {3, 4});
  addInts(G, "block", {2, 2});
  addNode(G, "Col2Im", {"cols", "image", "block"}, {"y"});
  addInts(G, "sizes", {5, 7});
  auto *R = addNode(G, "Resize", {"img", "", "", "sizes"}, {"r"});
  auto *A = R->add_attribute();
  A->set_name("axes");
  A->set_type(onnx::AttributeProto::INTS);
  A->add_ints(2);
  A->add_ints(3);
  A = R->add_attribute();
  A->set_name("keep_aspect_ratio_policy");
  A->set_type(onnx::AttributeProto::STRING);
  A->set_s("not_larger");
  auto *P = addNode(G, "AveragePool", {"img"}, {"p"});
  A = P->add_attribute();
  A->set_name("kernel_shape");
  A->set_type(onnx::AttributeProto::INTS);
  A->add_ints(3);
  A->add_ints(3);
  A = P->add_attribute();
  A->set_name("dilations");
  A->set_type(onnx::AttributeProto::INTS);
  A->add_ints(2);
  A->add_ints(1);
  addTensor(G.mutable_output(), "y", {1, 2, 3, 4});
  infer(M);
  EXPECT_EQ(inferredDims(M, "r"), (std::vector<int64_t>{1, 2, 5, 5}));
  // Height: 8 - ((3 - 1) * 2 + 1) + 1 = 4; width 8 - 3 + 1 = 6.
  EXPECT_EQ(inferredDims(M, "p"), (std::vector<int64_t>{1, 2, 4, 6}));
}

TEST(Opsets, CheckerAcceptsNewAttributesOnlyFromTheirOpset) {
  for (int64_t Opset : {17, 18}) {
    onnx::ModelProto M = model(Opset);
    auto &G = *M.mutable_graph();
    addTensor(G.mutable_input(), "x", {1, 2, 4, 4});
    auto *N = addNode(G, "LpPool", {"x"}, {"y"});
    auto *A = N->add_attribute();
    A->set_name("kernel_shape");
    A->set_type(onnx::AttributeProto::INTS);
    A->add_ints(2);
    A->add_ints(2);
    A = N->add_attribute();
    A->set_name("ceil_mode");
    A->set_type(onnx::AttributeProto::INT);
    A->set_i(1);
    addTensor(G.mutable_output(), "y", {1, 2, 3, 3});
    if (Opset < 18)
      EXPECT_ANY_THROW(checkModel(M, schemaRegistry()));
    else
      EXPECT_NO_THROW(checkModel(M, schemaRegistry()));
  }
}

/// A one-node model at Opset with input x of Dims, for hostile attributes.
onnx::ModelProto oneNode(int64_t Opset, const std::string &Op,
                         std::vector<int64_t> Dims,
                         std::vector<std::string> Inputs,
                         onnx::NodeProto **Node) {
  onnx::ModelProto M = model(Opset, 9);
  auto &G = *M.mutable_graph();
  addTensor(G.mutable_input(), "x", std::move(Dims));
  Inputs.insert(Inputs.begin(), "x");
  *Node = addNode(G, Op, Inputs, {"y"});
  return M;
}

void setInts(onnx::NodeProto *N, const std::string &Name,
             std::vector<int64_t> V) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INTS);
  for (int64_t X : V)
    A->add_ints(X);
}

/// Inference of a hostile node fails with an ONNX error naming the reason
/// (the importer turns it into a diagnostic); it never overflows or hangs.
std::string inferenceError(onnx::ModelProto &M) {
  try {
    infer(M);
  } catch (const std::exception &E) {
    return E.what();
  }
  return "";
}

TEST(Opsets, HostileValuesFailInferenceCleanly) {
  onnx::NodeProto *N;
  onnx::ModelProto Pad = oneNode(18, "Pad", {2, 3}, {"pads"}, &N);
  addInts(*Pad.mutable_graph(), "pads", {0, int64_t(1) << 62, 0, 1});
  EXPECT_NE(inferenceError(Pad).find("pad 4611686018427387904 is out of range"),
            std::string::npos);

  onnx::ModelProto Pool = oneNode(18, "LpPool", {1, 1, 8, 8}, {}, &N);
  setInts(N, "kernel_shape", {2, 2});
  setInts(N, "dilations", {int64_t(1) << 61, 1});
  EXPECT_NE(inferenceError(Pool).find("out of range"), std::string::npos);

  onnx::ModelProto Resize =
      oneNode(18, "Resize", {1, 1, 8, 8}, {"", "", "sizes"}, &N);
  addInts(*Resize.mutable_graph(), "sizes", {1, 1, -4, 8});
  EXPECT_NE(inferenceError(Resize).find("sizes must be positive"),
            std::string::npos);

  onnx::ModelProto Split = oneNode(18, "Split", {6}, {}, &N);
  auto *A = N->add_attribute();
  A->set_name("num_outputs");
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(0);
  EXPECT_NE(inferenceError(Split), "");

  onnx::ModelProto Col = oneNode(18, "Col2Im", {1, 4, 9}, {"img", "blk"}, &N);
  addInts(*Col.mutable_graph(), "img", {3, 3});
  addInts(*Col.mutable_graph(), "blk", {int64_t(1) << 40, int64_t(1) << 40});
  EXPECT_NE(inferenceError(Col).find("block_shape entry"), std::string::npos);
}

} // namespace
