//===- CustomOpsTest.cpp - User-declared ops: expressions, TOML, hooks ----===//
#include "ops/custom/CustomOp.h"

#include <gtest/gtest.h>

using namespace cuvil;

namespace {

/// Evaluates Text with inputs of the given shapes and int attributes.
llvm::Expected<std::optional<int64_t>>
eval(const std::string &Text, std::vector<std::vector<int64_t>> Shapes,
     std::map<std::string, int64_t> Attrs = {}) {
  auto X = ShapeExpr::parse(Text);
  if (!X)
    return X.takeError();
  ShapeExpr::Env E{[&](unsigned I) -> const std::vector<int64_t> * {
                     return I < Shapes.size() ? &Shapes[I] : nullptr;
                   },
                   [&](const std::string &A) { return Attrs[A]; }};
  return X->evaluate(E);
}

int64_t value(const std::string &Text,
              std::vector<std::vector<int64_t>> Shapes = {{2, 3, 4}},
              std::map<std::string, int64_t> Attrs = {{"n", 5}}) {
  auto V = eval(Text, std::move(Shapes), std::move(Attrs));
  if (!V) {
    ADD_FAILURE() << Text << ": " << llvm::toString(V.takeError());
    return INT64_MIN;
  }
  EXPECT_TRUE(V->has_value()) << Text;
  return V->value_or(INT64_MIN);
}

std::string error(const std::string &Text,
                  std::vector<std::vector<int64_t>> Shapes = {{2, 3, 4}}) {
  auto V = eval(Text, std::move(Shapes));
  if (V) {
    ADD_FAILURE() << Text << " evaluated";
    return "";
  }
  return llvm::toString(V.takeError());
}

TEST(ShapeExprTest, ArithmeticAndPrecedence) {
  EXPECT_EQ(value("1 + 2 * 3"), 7);
  EXPECT_EQ(value("(1 + 2) * 3"), 9);
  EXPECT_EQ(value("10 - 4 - 3"), 3);
  EXPECT_EQ(value("17 / 5"), 3);
  EXPECT_EQ(value("-7 / 2"), -3); // C division
  EXPECT_EQ(value("17 % 5"), 2);
  EXPECT_EQ(value("--3"), 3);
  EXPECT_EQ(value("(in0[2] + 1) / 2"), 2);
}

TEST(ShapeExprTest, InputsAndAttributes) {
  EXPECT_EQ(value("in0[0]"), 2);
  EXPECT_EQ(value("in0[-1]"), 4);
  EXPECT_EQ(value("in1[0] * in0[1]", {{2, 3}, {7}}), 21);
  EXPECT_EQ(value("rank(in0)"), 3);
  EXPECT_EQ(value("numel(in0)"), 24);
  EXPECT_EQ(value("attr.n * 2"), 10);
}

TEST(ShapeExprTest, UnknownDimensionsPropagate) {
  auto V = eval("in0[1] * 2 + 1", {{2, -1}});
  ASSERT_TRUE(bool(V));
  EXPECT_FALSE(V->has_value());
  V = eval("in0[0]", {{2, -1}});
  ASSERT_TRUE(bool(V));
  EXPECT_EQ(**V, 2);
}

TEST(ShapeExprTest, EvaluationErrors) {
  EXPECT_EQ(error("in0[3]"), "'in0[3]': input 0 has rank 3, no axis 3");
  EXPECT_EQ(error("in0[-4]"), "'in0[-4]': input 0 has rank 3, no axis -4");
  EXPECT_EQ(error("in1[0]"), "'in1[0]': input 1 is absent");
  EXPECT_EQ(error("in0[0] / (in0[1] - 3)"),
            "'in0[0] / (in0[1] - 3)': division by zero (2 / 0)");
  EXPECT_EQ(error("9223372036854775807 + 1"),
            "'9223372036854775807 + 1': arithmetic on 9223372036854775807 "
            "and 1 overflows 64 bits");
}

TEST(ShapeExprTest, ParseErrorsSayWhere) {
  auto Err = [](const char *T) {
    auto X = ShapeExpr::parse(T);
    EXPECT_FALSE(bool(X)) << T;
    return X ? std::string() : llvm::toString(X.takeError());
  };
  EXPECT_EQ(Err("in0[1] +"), "expected a number, '(', inK[axis], rank(inK), "
                             "numel(inK) or attr.NAME at the end of "
                             "'in0[1] +'");
  EXPECT_EQ(Err("in0 * 2"), "expected '[' after the input (a dimension such "
                            "as in0[1]) at column 5 of 'in0 * 2'");
  EXPECT_EQ(Err("(1 + 2"), "expected ')' at the end of '(1 + 2'");
  EXPECT_EQ(Err("1 2"), "expected an operator or the end at column 3 of '1 2'");
  EXPECT_EQ(Err("rank(x)"), "expected an input such as in0 at column 6 of "
                            "'rank(x)'");
  EXPECT_EQ(Err("99999999999999999999"),
            "expected an integer below 2^63 at column 1 of "
            "'99999999999999999999'");
}

TEST(ShapeExprTest, RefsAreVisited) {
  auto X = ShapeExpr::parse("in2[0] + attr.k * numel(in0)");
  ASSERT_TRUE(bool(X));
  std::vector<unsigned> Ins;
  std::vector<std::string> Attrs;
  X->forEachRef([&](unsigned I) { Ins.push_back(I); },
                [&](const std::string &A) { Attrs.push_back(A); });
  EXPECT_EQ(Ins, (std::vector<unsigned>{2, 0}));
  EXPECT_EQ(Attrs, std::vector<std::string>{"k"});
}

TEST(ShapeRuleTest, CopyListAndScalar) {
  std::vector<std::vector<int64_t>> Shapes = {{1, 8, 8, 3}};
  ShapeExpr::Env E{[&](unsigned I) -> const std::vector<int64_t> * {
                     return I < Shapes.size() ? &Shapes[I] : nullptr;
                   },
                   [](const std::string &) { return int64_t(2); }};
  auto Copy = ShapeRule::parse(" in0 ");
  ASSERT_TRUE(bool(Copy));
  EXPECT_EQ(*Copy->evaluate(E), Shapes[0]);
  auto List = ShapeRule::parse("[in0[0], in0[3], in0[1] * attr.f, in0[2]]");
  ASSERT_TRUE(bool(List));
  EXPECT_EQ(*List->evaluate(E), (std::vector<int64_t>{1, 3, 16, 8}));
  auto Scalar = ShapeRule::parse("[]");
  ASSERT_TRUE(bool(Scalar));
  EXPECT_EQ(*Scalar->evaluate(E), std::vector<int64_t>{});
  auto Negative = ShapeRule::parse("[in0[0] - 2]");
  ASSERT_TRUE(bool(Negative));
  auto R = Negative->evaluate(E);
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(llvm::toString(R.takeError()),
            "'in0[0] - 2' is -1: a dimension cannot be negative");
  auto Bad = ShapeRule::parse("in0[0]");
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(llvm::toString(Bad.takeError()),
            "'in0[0]': expected inK (the shape of input K) or a list of "
            "dimensions such as [in0[0], attr.n * 2]");
  auto Out = ShapeRule::parse("out0");
  ASSERT_FALSE(bool(Out));
  llvm::consumeError(Out.takeError());
}

constexpr const char *Declared = R"toml(
[[op]]
name = "Resample"
domain = "com.vendor"
kernel = "vendor_resample"
inputs = [{ name = "x", dtype = ["f32", "i8"] },
          { name = "bias", dtype = "f32", optional = true }]
attributes = [
  { name = "factor", kind = "int", default = 2 },
  { name = "gain", kind = "float", required = true },
  { name = "taps", kind = "ints", default = [1, 2, 1] },
  { name = "mode", kind = "string", default = "linear" },
]
params = ["in0", "in1", "out0", "attr.gain", "attr.taps", "attr.factor",
          "width = in0[1]", "numel(in0)"]
macs = "numel(in0) * 3"

[[op.outputs]]
name = "y"
dtype = "in0"
shape = "[in0[0], in0[1] * attr.factor]"
)toml";

std::string parseError(const std::string &Text) {
  auto S = parseCustomOps(Text, "ops.toml");
  if (S) {
    ADD_FAILURE() << "parsed:\n" << Text;
    return "";
  }
  return llvm::toString(S.takeError());
}

TEST(CustomOpTomlTest, DeclarationAndPrototype) {
  auto S = parseCustomOps(Declared, "ops.toml");
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  ASSERT_EQ((*S)->ops().size(), 1u);
  const CustomOp &C = *(*S)->ops()[0];
  EXPECT_EQ(C.Line, 2u);
  EXPECT_EQ(C.Inputs.size(), 2u);
  EXPECT_TRUE(C.Inputs[1].Optional);
  EXPECT_EQ(C.Outputs[0].DTypeOf, 0u);
  EXPECT_EQ(std::get<int64_t>(C.attr("factor")->Default), 2);
  EXPECT_TRUE(C.attr("gain")->Required);
  EXPECT_EQ(C.prototype(),
            "void vendor_resample(const void *x, const float *bias, void *y, "
            "float gain, const int64_t *taps, int64_t factor, int64_t width, "
            "int64_t p7)");
  const OpDef *D = (*S)->registry().lookup("com.vendor", "Resample");
  ASSERT_TRUE(D);
  EXPECT_EQ(customOpOf(D), &C);
  EXPECT_EQ(D->place(), Placement::Fresh);
  EXPECT_FALSE((*S)->registry().lookup("com.other", "Resample"));
  EXPECT_FALSE(customOpOf(lookupOp("Relu")));
}

TEST(CustomOpTomlTest, NodesVerifyAndLower) {
  auto S = parseCustomOps(Declared, "ops.toml");
  ASSERT_TRUE(bool(S));
  const OpDef *D = (*S)->registry().lookup("com.vendor", "Resample");
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {4, 5}, ValueKind::Input);
  Value *Y = G.addValue("y", DType::F32, {4, 10}, ValueKind::Intermediate);
  Node *N = G.addNode("Resample", "rs", D, {X}, {Y});
  N->setAttr("gain", 0.5f);
  N->setAttr("taps", std::vector<int64_t>{3, 4});
  N->setAttr("cuvil.domain", std::string("com.vendor"));
  ASSERT_FALSE(bool(D->Verify(*N)));
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(D->Lower(*N, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  const KernelCall &K = Calls[0];
  EXPECT_EQ(K.Kernel, "vendor_resample");
  ASSERT_EQ(K.Args.size(), 8u);
  EXPECT_EQ(K.Args[0].V, X);
  EXPECT_EQ(K.Args[1].K, KernelArg::Kind::Null); // the absent bias
  EXPECT_EQ(K.Args[2].V, Y);
  EXPECT_EQ(K.Args[3].F, 0.5f);
  EXPECT_EQ(K.Args[4].Array, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(K.Args[5].I, 2); // factor's default
  EXPECT_EQ(K.Args[6].I, 5);
  EXPECT_EQ(K.Args[7].I, 20);
  EXPECT_EQ(D->Macs(*N), 60);

  // What the declaration refuses, named by node.
  N->setAttr("factor", int64_t(3));
  llvm::Error E = D->Verify(*N);
  EXPECT_EQ(llvm::toString(std::move(E)),
            "node 'rs' (Resample): output 0 'y' has shape [4, 10]; the shape "
            "rule '[in0[0], in0[1] * attr.factor]' gives [4, 15]");
  N->removeAttr("factor");
  N->setAttr("color", int64_t(1));
  EXPECT_EQ(llvm::toString(D->Verify(*N)),
            "node 'rs' (Resample): attribute 'color' is not declared for "
            "custom op Resample");
  N->removeAttr("color");
  N->removeAttr("gain");
  EXPECT_EQ(llvm::toString(D->Verify(*N)),
            "node 'rs' (Resample): required attribute 'gain' is missing");
}

TEST(CustomOpTomlTest, ErrorsNameFileLineOpAndField) {
  EXPECT_EQ(parseError("[[op]]\nname = \"A\"\ncolour = 1\n"),
            "ops.toml:3: op 'A': unknown field 'colour' (expected one of "
            "name, domain, kernel, inputs, outputs, attributes, params, macs, "
            "in_place, doc)");
  EXPECT_EQ(parseError("[[op]]\nname = \"A\"\ndomain = \"ai.onnx\"\n"),
            "ops.toml:3: op 'A': domain: 'ai.onnx' is reserved (ONNX's "
            "domains, cuvil's); declare ops of your own domain, such as "
            "com.vendor");
  EXPECT_EQ(parseError("[[op]]\nname = \"A\"\ndomain = \"d\"\n"
                       "kernel = \"cuvil_k_relu\"\n"),
            "ops.toml:4: op 'A': kernel: 'cuvil_k_relu' clashes with cuvil's "
            "own symbols (cuvil_*); name it after your firmware");
  EXPECT_EQ(parseError("[[op]]\nname = \"A\"\ndomain = \"d\"\n"
                       "kernel = \"my-kernel\"\n"),
            "ops.toml:4: op 'A': kernel: 'my-kernel' is not a C identifier "
            "the firmware can define (letters, digits and '_', not a keyword "
            "or a reserved name)");
  std::string Head = "[[op]]\nname = \"A\"\ndomain = \"d\"\nkernel = \"k\"\n"
                     "inputs = [{ name = \"x\", dtype = \"f32\" }]\n";
  EXPECT_EQ(parseError(Head + "outputs = [{ name = \"y\", dtype = \"f32\", "
                              "shape = \"[in0[0] +]\" }]\n"),
            "ops.toml:6: op 'A': output 0.shape: '[in0[0] +]': dimension 0: "
            "expected a number, '(', inK[axis], rank(inK), numel(inK) or "
            "attr.NAME at the end of 'in0[0] +'");
  EXPECT_EQ(parseError(Head + "outputs = [{ name = \"y\", dtype = \"f32\", "
                              "shape = \"[in1[0]]\" }]\n"),
            "ops.toml:6: op 'A': output 0.shape: 'in1[0]' reads input 1, but "
            "the op declares 1");
  EXPECT_EQ(parseError(Head + "outputs = [{ name = \"y\", dtype = \"f32\", "
                              "shape = \"[attr.n]\" }]\n"),
            "ops.toml:6: op 'A': output 0.shape: 'attr.n' reads attribute "
            "'n', which is not declared");
  std::string Out = "outputs = [{ name = \"y\", dtype = \"f32\", shape = "
                    "\"in0\" }]\n";
  EXPECT_EQ(parseError(Head + Out + "params = [\"in0\"]\n"),
            "ops.toml:7: op 'A': params: output 0 ('out0') is not passed to "
            "the kernel, which must write it");
  EXPECT_EQ(parseError(Head + Out +
                       "attributes = [{ name = \"a\", kind = \"float\" }]\n"
                       "params = [\"out0\"]\n"),
            "ops.toml:7: op 'A': attribute 'a': needs a default, or required "
            "= true");
  EXPECT_EQ(parseError(Head + Out + "params = [\"out0\", \"in0[7\"]\n"),
            "ops.toml:7: op 'A': params[1]: expected ']' at the end of "
            "'in0[7'");
  std::string Op = Head + Out + "params = [\"out0\"]\n";
  EXPECT_EQ(parseError(Op + Op),
            "ops.toml:8: op 'A': declared twice (first at line 1)");
  EXPECT_EQ(parseError("[[op]]\nname = \"Relu\"\n"),
            "ops.toml:2: op 'Relu': name: 'Relu' is the name of an ONNX "
            "operator cuvil compiles, which cuvil's passes would take the "
            "node for; name it otherwise");
  EXPECT_EQ(parseError("[[op]]\nname = \"A\"\nname = \"B\"\n"),
            "ops.toml:3: Error while parsing key-value pair: cannot "
            "redefine existing string 'name'");
}

} // namespace
