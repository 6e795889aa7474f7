//===- ReportTest.cpp - cuvilc report: profiles, bottlenecks, HTML --------===//
#include "codegen/ProfileCode.h"
#include "emit/Bottlenecks.h"
#include "emit/HtmlReport.h"
#include "emit/LayerProfile.h"

#include <gtest/gtest.h>

using namespace cuvil;

namespace {

const char *const TwoSteps = R"J({
  "model": "m", "target": "u74-mc", "runs": 1,
  "counters": ["cycles", "instructions"],
  "total": {"cycles": 1000, "instructions": 1500},
  "steps": [
    {"step": 0, "node": "conv", "op": "Conv", "cycles": 600,
     "instructions": 900},
    {"step": 1, "node": "relu", "op": "Relu", "cycles": 300},
    {"step": 2, "node": "(output copies)", "op": "Copy", "cycles": 50}]})J";

std::string errorOf(std::string_view Text) {
  auto P = parseLayerProfile(Text);
  if (P)
    return "parsed";
  return llvm::toString(P.takeError());
}

LayerFacts layer(size_t Step, std::string Name, int64_t Macs,
                 std::vector<std::string> Kernels, int64_t Bytes = 0) {
  LayerFacts F;
  F.Step = Step;
  F.Name = std::move(Name);
  F.Op = "Op";
  F.Macs = Macs;
  F.BytesMoved = Bytes;
  F.HasCode = true;
  F.Kernels = std::move(Kernels);
  F.Precision = "f32";
  return F;
}

TargetInfo board() {
  TargetInfo T;
  T.Name = "u74-mc";
  T.PeakMacsF32 = 1;
  T.PeakMacsInt8 = 2;
  return T;
}

LayerProfileStep step(std::string Node, double Cycles) {
  LayerProfileStep S;
  S.Node = std::move(Node);
  S.Counts["cycles"] = Cycles;
  return S;
}

} // namespace

TEST(LayerProfile, ReadsTopLevelAndNestedObjects) {
  auto P = parseLayerProfile(TwoSteps);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  EXPECT_EQ(P->Target, "u74-mc");
  EXPECT_EQ(P->Counters, (std::vector<std::string>{"cycles", "instructions"}));
  EXPECT_EQ(P->Total.at("cycles"), 1000);
  ASSERT_EQ(P->Steps.size(), 3u);
  EXPECT_EQ(P->Steps[0].Counts.at("instructions"), 900);
  // A counter after the first may be missing from a step.
  EXPECT_EQ(P->Steps[1].Counts.count("instructions"), 0u);
  EXPECT_EQ(P->Steps[2].Node, std::string(OutputCopiesStep));

  auto Nested = parseLayerProfile(
      std::string(R"({"outputs": [], "profile": )") + TwoSteps + "}");
  ASSERT_TRUE(bool(Nested)) << llvm::toString(Nested.takeError());
  EXPECT_EQ(Nested->Steps.size(), 3u);
}

TEST(LayerProfile, SaysWhatIsWrong) {
  EXPECT_EQ(errorOf("{\"counters\": [\"cycles\"], \"steps\": ["), "not valid "
                                                                  "JSON");
  EXPECT_EQ(errorOf("[1, 2]"), "expected a JSON object with \"counters\" and "
                               "\"steps\" (see docs/profiling.md)");
  EXPECT_EQ(errorOf(R"({"steps": []})"),
            "\"counters\" must be a non-empty array of counter names");
  EXPECT_EQ(errorOf(R"({"counters": ["cycles"], "steps": []})"),
            "\"steps\" is empty: nothing was profiled");
  EXPECT_EQ(errorOf(R"({"counters": ["cycles"], "steps": [{"node": "a"}]})"),
            "steps[0] (node 'a') has no \"cycles\" count");
  EXPECT_EQ(errorOf(R"({"counters": ["cycles"], "steps": [{"cycles": 1}]})"),
            "steps[0] has no \"node\"");
  EXPECT_EQ(errorOf(R"({"counters": ["cycles"], "steps": [{"node": "a",
                  "cycles": -5}]})"),
            "steps[0].cycles is -5: counts are finite and not negative");
  EXPECT_EQ(errorOf(R"({"counters": ["cycles"], "target": 7,
                        "steps": [{"node": "a", "cycles": 1}]})"),
            "the profile: \"target\" is not a string");
}

TEST(Bottlenecks, SharesRatesAndPeakFractions) {
  std::vector<LayerFacts> Layers = {
      layer(0, "conv", 1200, {"cuvil_k_conv2d_packed_f32"}, 100),
      layer(1, "reshape", 0, {}),
      layer(2, "relu", 0, {"cuvil_k_relu_f32"}, 800)};
  Layers[1].HasCode = false;
  auto P = parseLayerProfile(R"J({"counters": ["cycles"],
      "total": {"cycles": 1000},
      "steps": [{"node": "conv", "cycles": 600},
                {"node": "relu", "cycles": 300},
                {"node": "(output copies)", "cycles": 50}]})J");
  ASSERT_TRUE(bool(P));
  auto A = analyzeProfile(*P, Layers, board());
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  EXPECT_TRUE(A->Cycles);
  EXPECT_TRUE(A->TotalMeasured);
  EXPECT_EQ(A->Total, 1000);
  EXPECT_EQ(A->StepSum, 950);
  ASSERT_EQ(A->Rows.size(), 3u);
  EXPECT_EQ(A->Rows[0].Layer, &Layers[0]);
  EXPECT_DOUBLE_EQ(A->Rows[0].Share, 0.6);
  EXPECT_DOUBLE_EQ(*A->Rows[0].Rate, 2.0);
  EXPECT_DOUBLE_EQ(*A->Rows[0].PeakFraction, 2.0); // above a 1 MAC peak
  EXPECT_FALSE(A->Rows[1].Rate);
  EXPECT_EQ(A->Rows[2].Layer, nullptr);
  EXPECT_DOUBLE_EQ(*A->MedianRate, 2.0);
  // conv costs exactly its MACs at the median rate; relu (no MACs) and the
  // copies are all excess, largest first.
  ASSERT_EQ(A->Bottlenecks.size(), 2u);
  EXPECT_EQ(A->Bottlenecks[0].Row, 1u);
  EXPECT_DOUBLE_EQ(A->Bottlenecks[0].Excess, 300);
  EXPECT_EQ(A->Bottlenecks[1].Row, 2u);
  EXPECT_NE(A->Bottlenecks[0].Reasons.at(0).find("no multiply-accumulates"),
            std::string::npos);
  EXPECT_NE(A->Bottlenecks[1].Reasons.at(0).find("copies of the outputs"),
            std::string::npos);
}

TEST(Bottlenecks, ReasonsComeFromTheLayersFacts) {
  std::vector<LayerFacts> Layers;
  for (size_t I = 0; I < 3; ++I)
    Layers.push_back(layer(I, "fast" + std::to_string(I), 10000,
                           {"cuvil_k_conv2d_packed_f32"}, 1000));
  Layers.push_back(layer(3, "ref", 10000, {"cuvil_k_conv2d_f32"}, 1000));
  Layers.push_back(layer(4, "fc", 1000, {"cuvil_k_gemm_packed_f32"}, 4000));
  Layers.push_back(layer(5, "tail", 2000, {"cuvil_k_dwconv2d_f32"}, 500));
  Layers.push_back(layer(6, "perm", 0, {"cuvil_k_transpose_b32"}, 1000));
  Layers[5].OutputSpatial = 49;
  LayerProfile P;
  P.Counters = {"cycles"};
  P.Steps = {step("fast0", 1000), step("fast1", 1000), step("fast2", 1000),
             step("ref", 9000),   step("fc", 3000),    step("tail", 4000),
             step("perm", 2000)};
  auto A = analyzeProfile(P, Layers, board());
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  EXPECT_FALSE(A->TotalMeasured);
  EXPECT_EQ(A->Total, 21000);
  // Rates 10, 10, 10, 1.11, 0.33, 0.5: the median is 5.56 MACs per cycle,
  // so the excesses are 7200 (ref), 3640 (tail), 2820 (fc), 2000 (perm).
  EXPECT_NEAR(*A->MedianRate, (10 + 10000.0 / 9000) / 2, 1e-9);
  std::vector<size_t> Rows;
  for (const Bottleneck &B : A->Bottlenecks)
    Rows.push_back(B.Row);
  ASSERT_EQ(Rows, (std::vector<size_t>{3, 5, 4, 6}));
  auto First = [&](size_t I) { return A->Bottlenecks[I].Reasons.at(0); };
  EXPECT_EQ(First(0).rfind("scalar/reference path: cuvil_k_conv2d_f32 ", 0),
            0u);
  EXPECT_EQ(A->Bottlenecks[0].Reasons.size(), 1u);
  EXPECT_EQ(First(1).rfind("small spatial size: 49 output positions", 0), 0u);
  EXPECT_EQ(First(2).rfind("memory-bound: 4.00 bytes moved per MAC", 0), 0u);
  EXPECT_EQ(First(3), "layout copies: cuvil_k_transpose_b32 only move bytes");
  EXPECT_EQ(A->Bottlenecks[3].Reasons.size(), 1u);
}

TEST(Bottlenecks, OnlyLayersWellBelowTheMedianRateAreListed) {
  // Rates 1.0 (twice), 0.95 and 0.85 MACs per cycle, median 0.975: "near"
  // takes 0.6% of the total beyond its MACs' worth but is within 10% of
  // the median rate, so only "slow" is listed.
  std::vector<LayerFacts> Layers;
  for (const char *Name : {"a", "b", "near", "slow"})
    Layers.push_back(layer(Layers.size(), Name, 95000, {"k"}));
  LayerProfile P;
  P.Counters = {"cycles"};
  P.Steps = {step("a", 95000), step("b", 95000), step("near", 100000),
             step("slow", 111765)};
  auto A = analyzeProfile(P, Layers, board());
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  ASSERT_EQ(A->Bottlenecks.size(), 1u);
  EXPECT_EQ(A->Bottlenecks[0].Row, 3u);
}

TEST(Bottlenecks, AProfileOfAnotherBuildIsRefused) {
  std::vector<LayerFacts> Layers = {layer(0, "conv", 10, {"k"}),
                                    layer(1, "view", 0, {}),
                                    layer(2, "relu", 0, {"k"})};
  Layers[1].HasCode = false;
  auto Err = [&](std::vector<LayerProfileStep> Steps, std::string Target = "") {
    LayerProfile P;
    P.Counters = {"cycles"};
    P.Target = std::move(Target);
    P.Steps = std::move(Steps);
    auto A = analyzeProfile(P, Layers, board());
    return A ? std::string("matched") : llvm::toString(A.takeError());
  };
  EXPECT_EQ(Err({step("conv", 1), step("relu", 1)}), "matched");
  EXPECT_EQ(Err({step("conv", 1), step("relu", 1)}, "a78"),
            "the profile was measured on target 'a78', the report is for "
            "target 'u74-mc'");
  EXPECT_EQ(Err({step("conv", 1), step("gelu", 1)}),
            "step 0 is node 'gelu', which this build does not have: the "
            "profile is of another model or of a build with other options");
  EXPECT_EQ(Err({step("conv", 1), step("view", 1), step("relu", 1)}),
            "step 0 is node 'view', a view without code in this build: the "
            "profile is of a build with other options");
  EXPECT_EQ(Err({step("conv", 1), step("conv", 1), step("relu", 1)}),
            "node 'conv' is profiled twice");
  std::vector<LayerProfileStep> NoCycles = {step("conv", 1), step("relu", 1)};
  NoCycles[1].Counts = {{"instructions", 4}};
  EXPECT_EQ(Err(NoCycles), "step 0 (node 'relu') has no \"cycles\" count");
  // A step of copies only may have no kernel left to time.
  Layers[2].OnlyCopies = true;
  EXPECT_EQ(Err({step("conv", 1)}), "matched");
  Layers[2].OnlyCopies = false;
  EXPECT_EQ(Err({step("conv", 1)}),
            "node 'relu' (step 2) of this build has code but no profiled "
            "step: the profile is of another model or of a build with other "
            "options");
}

TEST(HtmlReport, TextHelpers) {
  EXPECT_EQ(html("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &apos;b&apos;&lt;/script&gt;");
  EXPECT_EQ(grouped(0), "0");
  EXPECT_EQ(grouped(999), "999");
  EXPECT_EQ(grouped(1234567), "1,234,567");
  EXPECT_EQ(grouped(-1000), "-1,000");
  EXPECT_EQ(bytesText(1000), "1000 B");
  EXPECT_EQ(bytesText(1572864), "1.5 MiB (1,572,864 B)");
}
