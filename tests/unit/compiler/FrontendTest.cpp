//===- FrontendTest.cpp - ONNX import: shapes, constants, errors ----------===//
#include "frontend/onnx/OnnxImporter.h"
#include "frontend/onnx/SourceLocation.h"

#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

using namespace cuvil;

namespace {

void addInput(onnx::GraphProto &G, const std::string &Name,
              std::vector<std::variant<int64_t, std::string>> Dims) {
  auto *In = G.add_input();
  In->set_name(Name);
  auto *TT = In->mutable_type()->mutable_tensor_type();
  TT->set_elem_type(onnx::TensorProto::FLOAT);
  for (const auto &D : Dims) {
    auto *Dim = TT->mutable_shape()->add_dim();
    if (auto *V = std::get_if<int64_t>(&D))
      Dim->set_dim_value(*V);
    else
      Dim->set_dim_param(std::get<std::string>(D));
  }
}

/// x[N,4] -> Gemm(W[3,4], transB) -> Relu -> y, written to a temp file.
std::string writeModel(const std::string &File, bool Symbolic,
                       const std::string &SecondOp = "Relu",
                       const std::string &SecondDomain = "") {
  onnx::ModelProto M;
  M.set_ir_version(7);
  M.add_opset_import()->set_version(13);
  if (!SecondDomain.empty()) {
    auto *OS = M.add_opset_import();
    OS->set_domain(SecondDomain);
    OS->set_version(1);
  }
  auto *G = M.mutable_graph();
  G->set_name("tiny");
  addInput(*G, "x",
           {Symbolic ? std::variant<int64_t, std::string>("N")
                     : std::variant<int64_t, std::string>(int64_t(2)),
            int64_t(4)});
  auto *W = G->add_initializer();
  W->set_name("W");
  W->set_data_type(onnx::TensorProto::FLOAT);
  W->add_dims(3);
  W->add_dims(4);
  for (int I = 0; I < 12; ++I)
    W->add_float_data(0.5f * I);
  auto *Gemm = G->add_node();
  Gemm->set_op_type("Gemm");
  Gemm->set_name("fc");
  Gemm->add_input("x");
  Gemm->add_input("W");
  Gemm->add_output("h");
  auto *TB = Gemm->add_attribute();
  TB->set_name("transB");
  TB->set_type(onnx::AttributeProto::INT);
  TB->set_i(1);
  auto *Act = G->add_node();
  Act->set_op_type(SecondOp);
  Act->set_domain(SecondDomain);
  Act->set_name("act");
  Act->add_input("h");
  Act->add_output("y");
  auto *Out = G->add_output();
  Out->set_name("y");
  auto *OT = Out->mutable_type()->mutable_tensor_type();
  OT->set_elem_type(onnx::TensorProto::FLOAT);
  OT->mutable_shape()->add_dim(); // unknown: shape inference fills it in
  OT->mutable_shape()->add_dim();
  std::string Path = ::testing::TempDir() + "/" + File;
  std::ofstream OS(Path, std::ios::binary);
  M.SerializeToOstream(&OS);
  return Path;
}

} // namespace

TEST(Frontend, ImportsShapesConstantsAndAttributes) {
  auto G = importOnnx(writeModel("tiny.onnx", false), {});
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  Graph &Gr = **G;
  ASSERT_EQ(Gr.nodes().size(), 2u);
  const Node &Fc = *Gr.nodes()[0];
  EXPECT_EQ(Fc.opType(), "Gemm");
  EXPECT_EQ(Fc.getInt("transB", 0), 1);
  EXPECT_EQ(Fc.opset(), 13);
  EXPECT_EQ(Fc.origin().str(), "fc#0");
  ASSERT_TRUE(Fc.input(1)->isConstant());
  EXPECT_EQ(Fc.input(1)->f32()[11], 5.5f);
  // Shapes come from ONNX shape inference.
  EXPECT_EQ(Fc.output(0)->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Gr.outputs()[0]->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Gr.inputs()[0]->kind(), ValueKind::Input);
}

TEST(Frontend, SymbolicDimensionsNeedAValue) {
  std::string P = writeModel("sym.onnx", true);
  auto G = importOnnx(P, {});
  ASSERT_FALSE(bool(G));
  EXPECT_EQ(llvm::toString(G.takeError()),
            "input 'x' has a symbolic dimension 'N'; give its value with "
            "--dim N=N");
  ImportOptions O;
  O.DimValues["N"] = 5;
  auto G2 = importOnnx(P, O);
  ASSERT_TRUE(bool(G2)) << llvm::toString(G2.takeError());
  EXPECT_EQ((*G2)->outputs()[0]->shape(), (std::vector<int64_t>{5, 3}));
  O.DimValues["M"] = 1;
  auto G3 = importOnnx(P, O);
  ASSERT_FALSE(bool(G3));
  EXPECT_NE(llvm::toString(G3.takeError()).find("no input dimension named 'M'"),
            std::string::npos);
}

TEST(Frontend, UnsupportedOpsStillImport) {
  auto G = importOnnx(writeModel("hm.onnx", false, "RandomUniformLike"), {});
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  EXPECT_EQ((*G)->nodes()[1]->def(), nullptr);
  EXPECT_EQ((*G)->nodes()[1]->output(0)->shape(), (std::vector<int64_t>{2, 3}));
}

TEST(Frontend, GarbageAndTruncatedFilesAreRejected) {
  std::string Good = writeModel("good.onnx", false);
  std::ifstream In(Good, std::ios::binary);
  std::string Bytes((std::istreambuf_iterator<char>(In)), {});
  std::string Cut = ::testing::TempDir() + "/cut.onnx";
  std::ofstream(Cut, std::ios::binary) << Bytes.substr(0, Bytes.size() / 2);
  auto G = importOnnx(Cut, {});
  ASSERT_FALSE(bool(G));
  EXPECT_NE(llvm::toString(G.takeError()).find("not an ONNX model"),
            std::string::npos);

  std::string Text = ::testing::TempDir() + "/text.onnx";
  std::ofstream(Text) << "this is not a model\n";
  auto G2 = importOnnx(Text, {});
  ASSERT_FALSE(bool(G2));
  EXPECT_NE(llvm::toString(G2.takeError()).find("not an ONNX model"),
            std::string::npos);

  auto G3 = importOnnx(::testing::TempDir() + "/missing.onnx", {});
  ASSERT_FALSE(bool(G3));
  EXPECT_EQ(llvm::toString(G3.takeError()),
            "cannot open file: No such file or directory");
}

// An optional output left out ("") keeps the positions of the later ones
// (Node::outputAt); positions an op asks for as scratch are materialised.
TEST(Frontend, OptionalOutputsKeepTheirPositions) {
  onnx::ModelProto M;
  M.set_ir_version(7);
  M.add_opset_import()->set_version(14);
  auto *G = M.mutable_graph();
  G->set_name("lstm");
  addInput(*G, "X", {int64_t(2), int64_t(1), int64_t(3)});
  addInput(*G, "W", {int64_t(1), int64_t(8), int64_t(3)});
  addInput(*G, "R", {int64_t(1), int64_t(8), int64_t(2)});
  auto *L = G->add_node();
  L->set_op_type("LSTM");
  L->set_name("lstm");
  for (const char *In : {"X", "W", "R"})
    L->add_input(In);
  L->add_output("");
  L->add_output("Y_h");
  auto *H = L->add_attribute();
  H->set_name("hidden_size");
  H->set_type(onnx::AttributeProto::INT);
  H->set_i(2);
  auto *Out = G->add_output();
  Out->set_name("Y_h");
  auto *OT = Out->mutable_type()->mutable_tensor_type();
  OT->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t D : {1, 1, 2})
    OT->mutable_shape()->add_dim()->set_dim_value(D);
  std::string Path = ::testing::TempDir() + "/lstm.onnx";
  {
    std::ofstream OS(Path, std::ios::binary);
    M.SerializeToOstream(&OS);
  }
  auto Gr = importOnnx(Path, {});
  ASSERT_TRUE(bool(Gr)) << llvm::toString(Gr.takeError());
  const Node &N = *(*Gr)->nodes()[0];
  EXPECT_EQ(N.outputAt(0), nullptr);
  ASSERT_NE(N.outputAt(1), nullptr);
  EXPECT_EQ(N.outputAt(1)->name(), "Y_h");
  EXPECT_EQ(N.outputPos(0), 1u);
  // Y_c (2) and the workspace (3) are LSTM's scratch: internal values.
  ASSERT_EQ(N.outputs().size(), 3u);
  ASSERT_NE(N.outputAt(2), nullptr);
  ASSERT_NE(N.outputAt(3), nullptr);
  EXPECT_TRUE(N.outputAt(2)->users().empty());
  EXPECT_EQ(N.outputAt(3)->dtype(), DType::F32);
}

namespace {

/// The tiny model of writeModel, changed by Edit, written to File.
std::string editedModel(const std::string &File,
                        const std::function<void(onnx::ModelProto &)> &Edit) {
  onnx::ModelProto M;
  {
    std::ifstream In(writeModel(File, false), std::ios::binary);
    EXPECT_TRUE(M.ParseFromIstream(&In));
  }
  Edit(M);
  std::string Path = ::testing::TempDir() + "/" + File;
  std::ofstream OS(Path, std::ios::binary);
  M.SerializeToOstream(&OS);
  return Path;
}

} // namespace

// Newer exporters write graph outputs with only their element type; the
// ONNX checker insists on a shape there, so the frontend infers it first.
TEST(Frontend, OutputWithoutShapeGetsTheInferredOne) {
  auto G = importOnnx(editedModel("noshape.onnx",
                                  [](onnx::ModelProto &M) {
                                    M.mutable_graph()
                                        ->mutable_output(0)
                                        ->mutable_type()
                                        ->mutable_tensor_type()
                                        ->clear_shape();
                                  }),
                      {});
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  EXPECT_EQ((*G)->outputs()[0]->shape(), (std::vector<int64_t>{2, 3}));
}

// ONNX 1.12's Einsum inference gives the output rank only; cuvil's schema
// gives its dimensions, so ops after an Einsum get shapes at import.
TEST(Frontend, EinsumOutputDimensionsComeFromTheEquation) {
  auto G = importOnnx(editedModel("einsum.onnx",
                                  [](onnx::ModelProto &M) {
                                    auto *N =
                                        M.mutable_graph()->mutable_node(1);
                                    N->set_op_type("Einsum");
                                    auto *Eq = N->add_attribute();
                                    Eq->set_name("equation");
                                    Eq->set_type(onnx::AttributeProto::STRING);
                                    Eq->set_s("ij->ji");
                                  }),
                      {});
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  EXPECT_EQ((*G)->outputs()[0]->shape(), (std::vector<int64_t>{3, 2}));
}

// Without this check, the checker said "must be topologically sorted".
TEST(Frontend, MissingInitializerIsNamedWithItsNode) {
  auto G = importOnnx(editedModel("noinit.onnx",
                                  [](onnx::ModelProto &M) {
                                    M.mutable_graph()->clear_initializer();
                                  }),
                      {});
  ASSERT_FALSE(bool(G));
  EXPECT_EQ(llvm::toString(G.takeError()),
            "node 'fc' (Gemm): input 'W' is not an initializer, a graph input "
            "or the output of any node (a missing initializer, or a misspelt "
            "name?)");
}

TEST(Frontend, CycleIsNamedWithItsNodes) {
  auto G = importOnnx(
      editedModel("cycle.onnx",
                  [](onnx::ModelProto &M) {
                    // fc reads the Relu's output y.
                    M.mutable_graph()->mutable_node(0)->set_input(0, "y");
                  }),
      {});
  ASSERT_FALSE(bool(G));
  EXPECT_EQ(llvm::toString(G.takeError()),
            "the nodes form a cycle: node 'fc' (Gemm) reads 'y' from node "
            "'act' (Relu), which reads 'h' from node 'fc' (Gemm)");
}

// The dimensions of an initializer are compared with the data it holds
// before anything is allocated (here 2^44 bytes for 12 floats).
TEST(Frontend, InitializerDimsBeyondItsDataAllocateNothing) {
  auto G = importOnnx(
      editedModel("bigdims.onnx",
                  [](onnx::ModelProto &M) {
                    M.mutable_graph()->mutable_initializer(0)->set_dims(
                        0, int64_t(1) << 40);
                  }),
      {});
  ASSERT_FALSE(bool(G));
  EXPECT_EQ(llvm::toString(G.takeError()),
            "tensor 'W' has 12 elements, expected 4398046511104");
}

TEST(Frontend, RefusesNodesOfTheInternalDomain) {
  // cuvil.* ops are made by the passes only; a model cannot bring one.
  auto G =
      importOnnx(writeModel("internal.onnx", false, "PackedConv", "cuvil"), {});
  ASSERT_FALSE(bool(G));
  std::string Msg = llvm::toString(G.takeError());
  EXPECT_NE(Msg.find("node 'act' (PackedConv): domain 'cuvil' is reserved "
                     "for cuvil's internal ops"),
            std::string::npos)
      << Msg;
}

TEST(SourceLocation, FirstFrameOutsideTorch) {
  // As PyTorch 1.13's verbose export writes a Linear's doc_string.
  const char *Doc =
      "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py(114): "
      "forward\n"
      "/usr/lib/python3/dist-packages/torch/nn/modules/module.py(1182): "
      "_slow_forward\n"
      "/home/u/model.py(30): forward\n"
      "/home/u/train.py(7): <module>\n";
  EXPECT_EQ(cuvil::sourceLocation(Doc), "/home/u/model.py:30 (forward)");
  // Only torch frames: the innermost one.
  EXPECT_EQ(cuvil::sourceLocation(
                "/x/site-packages/torch/functional.py(12): einsum\n"),
            "/x/site-packages/torch/functional.py:12 (einsum)");
  // Not a stack: nothing.
  EXPECT_EQ(cuvil::sourceLocation(""), "");
  EXPECT_EQ(cuvil::sourceLocation("a hand-written note (v2): keep"), "");
  EXPECT_EQ(cuvil::sourceLocation("f(x): g\nmodel.py(): h"), "");
  // A path with parentheses keeps them; the line is the last group.
  EXPECT_EQ(cuvil::sourceLocation("/a (copy)/m.py(3): f"),
            "/a (copy)/m.py:3 (f)");
}
