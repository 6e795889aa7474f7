//===- OpRecordTest.cpp - The op record: traits, hooks, attributes --------===//
#include "TestGraphs.h"
#include "frontend/onnx/OnnxImporter.h"
#include "ops/Attrs.h"
#include "ops/HostTensor.h"
#include "ops/OpRegistry.h"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

using namespace cuvil;
using test::addOp;

namespace {

const OpDef &op(const char *Name) {
  const OpDef *D = lookupOp(Name);
  EXPECT_NE(D, nullptr) << Name;
  return *D;
}

/// x[2,3] -> Concat(x, x; axis given as AttrType) -> y[2,6], in a file.
std::string concatModel(const std::string &File,
                        onnx::AttributeProto::AttributeType AttrType) {
  onnx::ModelProto M;
  M.set_ir_version(7);
  M.add_opset_import()->set_version(13);
  auto *G = M.mutable_graph();
  G->set_name("cat");
  for (const char *Name : {"x", "y"}) {
    auto *V = Name[0] == 'x' ? G->add_input() : G->add_output();
    V->set_name(Name);
    auto *TT = V->mutable_type()->mutable_tensor_type();
    TT->set_elem_type(onnx::TensorProto::FLOAT);
    TT->mutable_shape()->add_dim()->set_dim_value(2);
    TT->mutable_shape()->add_dim()->set_dim_value(Name[0] == 'x' ? 3 : 6);
  }
  auto *N = G->add_node();
  N->set_op_type("Concat");
  N->set_name("cat");
  N->add_input("x");
  N->add_input("x");
  N->add_output("y");
  auto *A = N->add_attribute();
  A->set_name("axis");
  A->set_type(AttrType);
  if (AttrType == onnx::AttributeProto::INT)
    A->set_i(1);
  else
    A->set_f(1.0f);
  std::string Path = ::testing::TempDir() + "/" + File;
  std::ofstream Out(Path, std::ios::binary);
  M.SerializeToOstream(&Out);
  return Path;
}

} // namespace

// The planner's questions: which outputs are views, which may reuse their
// input, which concatenations may be built in place.
TEST(OpRecord, TraitsThePlannerAsks) {
  EXPECT_TRUE(op("Concat").has(OpTrait::ConcatOfInputs));
  EXPECT_FALSE(op("Split").has(OpTrait::ConcatOfInputs));
  EXPECT_EQ(op("Reshape").place(), Placement::View);
  EXPECT_TRUE(op("Identity").has(OpTrait::View));
  EXPECT_EQ(op("Relu").place(), Placement::InPlace);
  EXPECT_EQ(op("Conv").place(), Placement::Fresh);
  EXPECT_TRUE(op("Add").has(OpTrait::ElementWise));
  EXPECT_TRUE(op("Add").has(OpTrait::Commutative));
  EXPECT_FALSE(op("Sub").has(OpTrait::Commutative));
  // Comparisons narrow the element: element-wise, never in place.
  EXPECT_TRUE(op("Less").has(OpTrait::ElementWise));
  EXPECT_EQ(op("Less").place(), Placement::Fresh);
}

TEST(OpRecord, ShapeHookThroughTheRecord) {
  Graph G("g");
  Value *A = test::tensor(G, "a", {2, 3});
  Value *B = test::tensor(G, "b", {2, 5});
  Value *Y = G.addValue("y", DType::F32, {UnknownDim, UnknownDim},
                        ValueKind::Intermediate);
  Node *N = addOp(G, "Concat", "cat", {A, B}, {Y}, 0);
  N->setAttr("axis", int64_t(-1));
  ASSERT_NE(N->def()->Shape, nullptr);
  auto S = N->def()->Shape(*N);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_EQ(*S, (ShapeList{{2, 8}}));
  // Ops without a rule say so by a null hook.
  EXPECT_EQ(op("Conv").Shape, nullptr);
}

TEST(OpRecord, FoldHookThroughTheRecord) {
  Graph G("g");
  Value *A = test::tensor(G, "a", {2});
  Value *B = test::tensor(G, "b", {});
  Value *Y = test::tensor(G, "y", {2});
  Node *N = addOp(G, "Sub", "sub", {A, B}, {Y}, 0);
  ASSERT_NE(N->def()->Fold, nullptr);
  EXPECT_FALSE(N->def()->FoldShapeOnly);
  HostTensor X{DType::I64, {2}, {}}, Z{DType::I64, {}, {}};
  X.allocate();
  Z.allocate();
  putI(X, 0, 10);
  putI(X, 1, -4);
  putI(Z, 0, 3);
  std::vector<HostTensor> Out(1);
  Out[0].Ty = DType::I64;
  auto Done = N->def()->Fold(*N, {&X, &Z}, Out);
  ASSERT_TRUE(bool(Done)) << llvm::toString(Done.takeError());
  ASSERT_TRUE(*Done);
  EXPECT_EQ(Out[0].Shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(getI(Out[0], 0), 7);
  EXPECT_EQ(getI(Out[0], 1), -7);
  EXPECT_TRUE(op("Shape").FoldShapeOnly);
}

TEST(OpRecord, TypedAttributesReadTheirDeclaredKinds) {
  Graph G("g");
  Value *A = test::tensor(G, "a", {2, 3});
  Value *Y = test::tensor(G, "y", {2, 3});
  Node *N = addOp(G, "Concat", "cat", {A, A}, {Y}, 0);
  ASSERT_NE(N->def()->Attrs, nullptr);
  EXPECT_STREQ(N->def()->Attrs[0].Name, "axis");
  EXPECT_EQ(N->def()->Attrs[0].Kind, AttrKind::Int);
  EXPECT_EQ(N->def()->Attrs[1].Name, nullptr);
  EXPECT_FALSE(bool(verifyAttrKinds(*N)));
  N->setAttr("axis", int64_t(1));
  N->setAttr("cuvil.note", std::string("not declared: left alone"));
  EXPECT_FALSE(bool(verifyAttrKinds(*N)));
  N->setAttr("axis", std::vector<int64_t>{1});
  llvm::Error E = verifyAttrKinds(*N);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "node 'cat' (Concat): attribute 'axis' of Concat must be of kind "
            "int, but the model gives a ints");
}

// A model giving a supported op an attribute of the wrong kind is refused
// at import (by ONNX's checker or by cuvil's declaration), naming the node
// and the attribute; the right kind imports.
TEST(OpRecord, WrongAttributeKindIsRefusedAtImport) {
  auto Good =
      importOnnx(concatModel("cat_int.onnx", onnx::AttributeProto::INT), {});
  ASSERT_TRUE(bool(Good)) << llvm::toString(Good.takeError());
  auto Bad = importOnnx(
      concatModel("cat_float.onnx", onnx::AttributeProto::FLOAT), {});
  ASSERT_FALSE(bool(Bad));
  std::string Msg = llvm::toString(Bad.takeError());
  EXPECT_NE(Msg.find("cat"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("axis"), std::string::npos) << Msg;
}
