//===- IRParserTest.cpp - The textual IR reads back exactly ---------------===//
#include "ir/IRParser.h"
#include "frontend/onnx/OnnxImporter.h"
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>

using namespace cuvil;

namespace {

const OpDef *lookup(std::string_view Domain, std::string_view OpType) {
  return lookupOpInDomain(Domain, OpType);
}

std::unique_ptr<Graph> parseOk(const std::string &Text) {
  auto G = parseIR(Text, lookup, "t.cir");
  if (!G) {
    ADD_FAILURE() << llvm::toString(G.takeError()) << "\n" << Text;
    return nullptr;
  }
  return std::move(*G);
}

std::string parseError(const std::string &Text) {
  auto G = parseIR(Text, lookup, "t.cir");
  if (G) {
    ADD_FAILURE() << "parsed:\n" << Text;
    return "";
  }
  return llvm::toString(G.takeError());
}

IRPrintOptions full() {
  IRPrintOptions O;
  O.FullData = true;
  return O;
}

/// print -> parse -> print is the identity, and the node definitions
/// found again are the same.
void expectRoundTrip(const Graph &G, const std::string &Where) {
  std::string Text = G.print(full());
  auto P = parseIR(Text, lookup, Where);
  ASSERT_TRUE(static_cast<bool>(P))
      << Where << ": " << llvm::toString(P.takeError()) << "\n"
      << Text;
  EXPECT_EQ((*P)->print(full()), Text) << Where;
  ASSERT_EQ((*P)->nodes().size(), G.nodes().size()) << Where;
  for (size_t I = 0; I < G.nodes().size(); ++I)
    EXPECT_EQ((*P)->nodes()[I]->def(), G.nodes()[I]->def()) << Where;
}

} // namespace

// Every e2e model, as imported and after each pass of the pipeline.
TEST(IRParser, EveryModelRoundTripsAfterEachPass) {
  namespace fs = std::filesystem;
  std::vector<fs::path> Models;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(CUVIL_MODELS_DIR, EC))
    if (fs::exists(E.path() / "model.onnx"))
      Models.push_back(E.path() / "model.onnx");
  ASSERT_FALSE(Models.empty())
      << "no models in " CUVIL_MODELS_DIR " (build the target e2e_models)";
  PipelineOptions O;
  O.PackPanel = 8;
  size_t Imported = 0;
  for (const fs::path &M : Models) {
    auto G = importOnnx(M.string(), {});
    if (!G) { // the bad/ fixtures are refused by the importer
      llvm::consumeError(G.takeError());
      continue;
    }
    ++Imported;
    std::string Name = M.parent_path().filename().string();
    expectRoundTrip(**G, Name + " import");
    for (const Pass &P : defaultPipeline()) {
      if (auto E = P.Run(**G, O)) {
        llvm::consumeError(std::move(E));
        break;
      }
      expectRoundTrip(**G, Name + " " + std::string(P.Name));
    }
  }
  EXPECT_GE(Imported, Models.size() / 2) << "most models must import";
}

TEST(IRParser, HandWrittenForms) {
  auto G = parseOk(R"(// a comment
graph "my graph" opset 13
  input %x: f32[1x64x8x8]
  const %w: f32[64x64x3x3] = fill<7>  // 36864 floats in one line
  const %b: f32[64] = dense<0.5>
  const %axes: i64[2] = dense<[2, 3]>
  const %"odd name\n": f32[] = dense<-inf>
  %y: f32[1x64x8x8] = Conv(%x, %w, %b) {pads=[1,1,1,1], alpha=1.0, e=[], f=floats[], s="a\"b", ss=["p","q"]} name=c  # conv#0, relu#2
  <none>, %h: f32[1x64] = com.example.Rnn@2(%y, <none>, %"odd name\n")
  %m: f32[1x64x1x1] = ReduceMean(%y, %axes)  # mean#3
  return %y, %h, %m
)");
  ASSERT_TRUE(G);
  EXPECT_EQ(G->name(), "my graph");
  const Value *W = G->nodes()[0]->input(1);
  ASSERT_EQ(W->data().size(), 64u * 64 * 9 * 4);
  for (int64_t I = 0; I < W->numElements(); ++I)
    EXPECT_TRUE(W->f32()[I] >= -1 && W->f32()[I] < 1);
  EXPECT_NE(W->f32()[0], W->f32()[1]);
  EXPECT_EQ(G->nodes()[0]->input(2)->f32()[63], 0.5f);
  const Node &C = *G->nodes()[0];
  EXPECT_EQ(C.name(), "c");
  EXPECT_EQ(C.opset(), 13);
  EXPECT_NE(C.def(), nullptr);
  EXPECT_EQ(C.getString("s", ""), "a\"b");
  EXPECT_EQ(C.getFloat("alpha", 0), 1.0f);
  EXPECT_TRUE(std::holds_alternative<std::vector<int64_t>>(C.attrs().at("e")));
  EXPECT_TRUE(std::holds_alternative<std::vector<float>>(C.attrs().at("f")));
  EXPECT_EQ(C.origin().str(), "conv#0, relu#2");
  const Node &R = *G->nodes()[1];
  EXPECT_EQ(R.opType(), "Rnn");
  EXPECT_EQ(R.getString("cuvil.domain", ""), "com.example");
  EXPECT_EQ(R.def(), nullptr);
  EXPECT_EQ(R.opset(), 2);
  EXPECT_EQ(R.name(), "h");
  EXPECT_EQ(R.input(1), nullptr);
  EXPECT_EQ(R.outputPos(0), 1u);
  EXPECT_EQ(R.outputAt(1)->name(), "h");
  EXPECT_EQ(R.input(2)->name(), "odd name\n");
  expectRoundTrip(*G, "hand-written");
  // Not full: the weight is elided, the splat and small constants are not.
  std::string Short = G->print();
  EXPECT_NE(Short.find("const %w: f32[64x64x3x3] = elided<\"fnv1a64:"),
            std::string::npos)
      << Short;
  EXPECT_NE(Short.find("const %b: f32[64] = dense<0.5>"), std::string::npos);
  EXPECT_NE(Short.find("const %axes: i64[2] = dense<[2, 3]>"),
            std::string::npos);
  EXPECT_NE(Short.find("<none>, %h: f32[1x64] = com.example.Rnn@2(%y, "
                       "<none>, %\"odd name\\n\")"),
            std::string::npos)
      << Short;
}

TEST(IRParser, FloatsReadBackExactly) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {4}, ValueKind::Input);
  Value *C = G.addValue("c", DType::F32, {3}, ValueKind::Constant);
  float Data[3] = {0.1f, -0.0f, 3.4028235e38f};
  C->setData(std::vector<uint8_t>(reinterpret_cast<uint8_t *>(Data),
                                  reinterpret_cast<uint8_t *>(Data) + 12));
  Value *Y = G.addValue("y", DType::F32, {4}, ValueKind::Intermediate);
  Node *N = G.addNode("Add", "add", lookupOp("Add"), {X, C}, {Y});
  N->setAttr("f", 1e-7f);
  N->setAttr("fs", std::vector<float>{0.3f, 2.0f, -1e30f});
  G.inputs().push_back(X);
  G.outputs().push_back(Y);
  std::string Text = G.print(full());
  auto P = parseOk(Text);
  ASSERT_TRUE(P);
  EXPECT_EQ(P->print(full()), Text);
  EXPECT_EQ(std::memcmp(P->nodes()[0]->input(1)->data().data(), Data, 12), 0);
  EXPECT_EQ(P->nodes()[0]->getFloat("f", 0), 1e-7f);
}

TEST(IRParser, ErrorsSayWhereAndWhat) {
  EXPECT_EQ(parseError("graph g\n  input %x: f33[2]\n  return %x\n"),
            "t.cir:2:13: expected an element type (f32, i64, bool...), found "
            "'f33'");
  EXPECT_EQ(parseError("graph g\n  input %x: f32[2]\n  %y: f32[2] = "
                       "Relu(%x\n  return %y\n"),
            "t.cir:4:3: expected ')' after the inputs, found 'return'");
  EXPECT_EQ(parseError("graph g\n  %y: f32[2] = Relu(%x)\n  return %y\n"),
            "t.cir:2:22: value %x is used before it is defined");
  EXPECT_EQ(parseError("graph g\n  const %c: f32[3] = dense<[1, 2]>\n"
                       "  return %c\n"),
            "t.cir:2:22: constant %c has 2 elements, its shape wants 3");
  EXPECT_EQ(parseError("graph g\n  const %c: i8[1] = dense<300>\n  return\n"),
            "t.cir:2:27: 300 does not fit i8");
  EXPECT_EQ(parseError("graph g\n  input %x: f32[2]\n  input %x: f32[2]\n"
                       "  return\n"),
            "t.cir:3:10: value %x is defined twice");
  EXPECT_NE(parseError("graph g\n  const %c: f32[20] = elided<\"fnv1a64:0, "
                       "80 bytes\">\n  return %c\n")
                .find("t.cir:2:23: the data of this constant was elided"),
            std::string::npos);
  EXPECT_EQ(parseError("graph g\n  input %x: f32[2]\n"),
            "t.cir:3:1: expected 'return' and the graph's outputs, found the "
            "end of the input");
}
