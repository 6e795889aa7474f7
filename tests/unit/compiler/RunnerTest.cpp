//===- RunnerTest.cpp - Models compiled and run inside the process --------===//
//
// HostModel against the ONNX backend test data: each case's model is
// compiled for the host, run in the JIT, and its outputs compared with the
// case's expected ones.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/TensorProto.h"
#include "runner/HostRunner.h"

#include <cuvil/status.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <llvm/TargetParser/Host.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace cuvil;

namespace {

const std::string NodeDir = "/usr/share/libonnx-testdata/data/node/";

std::string readFile(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  EXPECT_TRUE(F.good()) << Path;
  return {std::istreambuf_iterator<char>(F), {}};
}

/// A tensor of a test data set, as dense bytes.
struct Tensor {
  DType Ty = DType::F32;
  std::vector<int64_t> Shape;
  std::vector<uint8_t> Bytes;
  /// An optional input left out: run gets NULL.
  bool Absent = false;
};

Tensor readTensor(const std::string &Path) {
  onnx::TensorProto P;
  EXPECT_TRUE(P.ParseFromString(readFile(Path))) << Path;
  Tensor T;
  auto Ty = mapType(P.data_type());
  EXPECT_TRUE(Ty.has_value()) << Path;
  T.Ty = Ty.value_or(DType::F32);
  int64_t Count = 1;
  for (int64_t D : P.dims()) {
    T.Shape.push_back(D);
    Count *= D;
  }
  auto B = tensorBytes(P, T.Ty, Count);
  EXPECT_TRUE(bool(B)) << llvm::toString(B.takeError());
  if (B)
    T.Bytes = std::move(*B);
  return T;
}

/// One backend test case: its model and data set 0.
struct Case {
  std::string Model;
  std::vector<Tensor> In, Out;
};

Case readCase(const std::string &Name) {
  Case C;
  std::string Dir = NodeDir + Name + "/";
  C.Model = readFile(Dir + "model.onnx");
  for (const char *Kind : {"input", "output"})
    for (int I = 0;; ++I) {
      std::string P =
          Dir + "test_data_set_0/" + Kind + "_" + std::to_string(I) + ".pb";
      if (!std::ifstream(P).good())
        break;
      (Kind[0] == 'i' ? C.In : C.Out).push_back(readTensor(P));
    }
  return C;
}

std::unique_ptr<HostModel>
compile(const std::string &Onnx,
        const std::map<std::string, int64_t> &Dims = {},
        const std::map<std::string, int64_t> &LoopBounds = {}) {
  std::ostringstream Log;
  BuildOptions Opts;
  Opts.Target = "host";
  Opts.Dims = Dims;
  Opts.LoopBounds = LoopBounds;
  auto M = HostModel::compile(Opts, Log, Onnx);
  EXPECT_TRUE(bool(M)) << llvm::toString(M.takeError());
  return M ? std::move(*M) : nullptr;
}

/// Runs M on C's inputs: the outputs' bytes.
std::vector<std::vector<uint8_t>> run(HostModel &M, const Case &C) {
  std::vector<std::vector<uint8_t>> Out;
  std::vector<const void *> InPtrs;
  std::vector<void *> OutPtrs;
  EXPECT_EQ(M.inputs().size(), C.In.size());
  for (size_t I = 0; I < C.In.size() && I < M.inputs().size(); ++I) {
    if (C.In[I].Absent) {
      EXPECT_TRUE(M.inputs()[I].Optional) << "input " << I;
      InPtrs.push_back(nullptr);
      continue;
    }
    EXPECT_EQ(M.inputs()[I].Bytes, C.In[I].Bytes.size()) << "input " << I;
    EXPECT_EQ(M.inputs()[I].Shape, C.In[I].Shape) << "input " << I;
    InPtrs.push_back(C.In[I].Bytes.data());
  }
  for (const RunnerTensor &T : M.outputs())
    Out.emplace_back(T.Bytes, 0xFF); // NaN or -1: not an answer
  for (auto &O : Out)
    OutPtrs.push_back(O.data());
  if (auto E = M.run(InPtrs, OutPtrs))
    ADD_FAILURE() << llvm::toString(std::move(E));
  return Out;
}

/// Outputs against the expected ones: floats within a relative and
/// absolute tolerance, everything else to the byte.
void expectOutputs(const HostModel &M, const Case &C,
                   const std::vector<std::vector<uint8_t>> &Got) {
  ASSERT_EQ(M.outputs().size(), C.Out.size());
  ASSERT_EQ(Got.size(), C.Out.size());
  for (size_t I = 0; I < C.Out.size(); ++I) {
    const Tensor &Want = C.Out[I];
    EXPECT_EQ(M.outputs()[I].Ty, Want.Ty) << "output " << I;
    EXPECT_EQ(M.outputs()[I].Shape, Want.Shape) << "output " << I;
    ASSERT_EQ(Got[I].size(), Want.Bytes.size()) << "output " << I;
    if (Want.Ty != DType::F32) {
      EXPECT_EQ(Got[I], Want.Bytes) << "output " << I;
      continue;
    }
    size_t N = Want.Bytes.size() / sizeof(float);
    std::vector<float> G(N), W(N);
    std::memcpy(G.data(), Got[I].data(), N * sizeof(float));
    std::memcpy(W.data(), Want.Bytes.data(), N * sizeof(float));
    for (size_t K = 0; K < N; ++K)
      EXPECT_NEAR(G[K], W[K], 1e-4f + 1e-4f * std::fabs(W[K]))
          << "output " << I << " element " << K;
  }
}

void expectCase(const std::string &Name) {
  SCOPED_TRACE(Name);
  Case C = readCase(Name);
  auto M = compile(C.Model);
  ASSERT_TRUE(M);
  expectOutputs(*M, C, run(*M, C));
}

} // namespace

TEST(Runner, ConvWithStridesPadding) {
  expectCase("test_conv_with_strides_padding");
}

TEST(Runner, GemmWithMatrixBias) {
  expectCase("test_gemm_default_matrix_bias");
}

TEST(Runner, SplitIntoThreeOutputs) { expectCase("test_split_equal_parts_1d"); }

TEST(Runner, ArgMaxGivesIntegers) {
  expectCase("test_argmax_default_axis_example");
}

TEST(Runner, DescribesItsTensors) {
  Case C = readCase("test_gemm_default_matrix_bias");
  auto M = compile(C.Model);
  ASSERT_TRUE(M);
  ASSERT_EQ(M->inputs().size(), 3u);
  EXPECT_EQ(M->inputs()[0].Name, "a");
  EXPECT_EQ(M->inputs()[0].Ty, DType::F32);
  EXPECT_EQ(M->inputs()[0].Shape, (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(M->inputs()[0].Bytes, 3u * 6u * 4u);
  ASSERT_EQ(M->outputs().size(), 1u);
  EXPECT_EQ(M->outputs()[0].Name, "y");
  EXPECT_EQ(M->outputs()[0].Bytes, 3u * 4u * 4u);
}

TEST(Runner, RunsManyTimesAlike) {
  Case C = readCase("test_conv_with_strides_padding");
  auto M = compile(C.Model);
  ASSERT_TRUE(M);
  auto First = run(*M, C);
  for (int I = 0; I < 3; ++I)
    EXPECT_EQ(run(*M, C), First) << "run " << I + 2;
  expectOutputs(*M, C, First);
}

TEST(Runner, TwoModelsAliveAtOnce) {
  // The same C prefix in both objects: each JIT resolves its own.
  Case Conv = readCase("test_conv_with_strides_padding");
  Case Gemm = readCase("test_gemm_default_matrix_bias");
  auto A = compile(Conv.Model);
  auto B = compile(Gemm.Model);
  ASSERT_TRUE(A && B);
  for (int I = 0; I < 2; ++I) {
    expectOutputs(*B, Gemm, run(*B, Gemm));
    expectOutputs(*A, Conv, run(*A, Conv));
  }
  // One gone, the other still runs.
  A.reset();
  expectOutputs(*B, Gemm, run(*B, Gemm));
}

TEST(Runner, BadModelIsAnError) {
  std::ostringstream Log;
  auto M = HostModel::compile("this is not an ONNX model", {}, Log);
  ASSERT_FALSE(bool(M));
  EXPECT_FALSE(llvm::toString(M.takeError()).empty());
  // A model whose ops cuvil refuses: an error from the compiler, not a
  // crash in the JIT.
  auto Bad = HostModel::compile(
      readFile(NodeDir + "test_conv_with_strides_padding/model.onnx")
          .substr(0, 40),
      {}, Log);
  EXPECT_FALSE(bool(Bad));
  llvm::consumeError(Bad.takeError());
}

TEST(Runner, WrongBuffersAreErrors) {
  Case C = readCase("test_split_equal_parts_1d");
  auto M = compile(C.Model);
  ASSERT_TRUE(M);
  std::vector<float> In(6), Out(6);
  auto E = M->run({In.data()}, {Out.data()});
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("3 outputs"), std::string::npos);
  E = M->run({nullptr}, {Out.data(), Out.data() + 2, Out.data() + 4});
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("input 0"), std::string::npos);
}

TEST(Runner, OtherArchitectureIsRefused) {
  Case C = readCase("test_gemm_default_matrix_bias");
  std::ostringstream Log;
  for (const char *Target : {"a78", "u74-mc"}) {
    auto M = HostModel::compile(C.Model, {}, Log, Target);
    ASSERT_FALSE(bool(M)) << Target;
    EXPECT_NE(llvm::toString(M.takeError()).find("cannot run on this machine"),
              std::string::npos)
        << Target;
  }
  auto M = HostModel::compile(C.Model, {}, Log, "no-such-target");
  ASSERT_FALSE(bool(M));
  EXPECT_NE(llvm::toString(M.takeError()).find("no-such-target"),
            std::string::npos);
}

TEST(Runner, MissingCpuFeaturesAreRefused) {
  auto T = loadTarget("host");
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  const std::string X86 = "x86_64-pc-linux-gnu";
  // A CPU without AVX2 and FMA (x86-64-v3 needs both).
  llvm::StringMap<bool> Old = {
      {"sse2", true}, {"avx", true}, {"avx2", false}, {"fma", false}};
  llvm::Error E = checkRunsOn(*T, X86, Old);
  ASSERT_TRUE(bool(E));
  std::string Msg = llvm::toString(std::move(E));
  EXPECT_NE(Msg.find("avx2"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("fma"), std::string::npos) << Msg;
  EXPECT_EQ(Msg.find("sse2"), std::string::npos) << Msg;
  // The same CPU with them; features it does not report are not asked.
  Old["avx2"] = Old["fma"] = true;
  EXPECT_FALSE(bool(checkRunsOn(*T, X86, Old)));
  // No feature report: only the architecture is checked.
  EXPECT_FALSE(bool(checkRunsOn(*T, X86, {})));
  E = checkRunsOn(*T, "aarch64-unknown-linux-gnu", {});
  EXPECT_TRUE(bool(E));
  llvm::consumeError(std::move(E));
  // This machine runs the host target (the tests above rely on it).
  EXPECT_FALSE(bool(checkRunsOn(*T, llvm::sys::getProcessTriple(),
                                llvm::sys::getHostCPUFeatures())));
}

TEST(Runner, StatusTextNamesTheCode) {
  EXPECT_EQ(statusText(CUVIL_ERR_ARENA_ALIGN),
            "CUVIL_ERR_ARENA_ALIGN (-2): an arena is misaligned");
  EXPECT_NE(statusText(-99).find("unknown"), std::string::npos);
}

/// The e2e models (tests/models/gen_models.py) against ONNX Runtime's
/// outputs, with the e2e tests' tolerances (tests/e2e/run_e2e.py): the JIT
/// runs the same code as the firmware images. The sanitized tree has the
/// models but not ONNX Runtime's outputs: there they only run.
TEST(Runner, EveryE2EModelMatchesOnnxRuntime) {
  namespace fs = std::filesystem;
  std::vector<fs::path> Dirs;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(CUVIL_MODELS_DIR, EC))
    if (fs::exists(E.path() / "manifest.json"))
      Dirs.push_back(E.path());
  std::sort(Dirs.begin(), Dirs.end());
  ASSERT_GE(Dirs.size(), 10u)
      << "no models in " CUVIL_MODELS_DIR " (build the target e2e_models)";
  for (const fs::path &Dir : Dirs) {
    SCOPED_TRACE(Dir.filename().string());
    auto Manifest =
        nlohmann::json::parse(readFile((Dir / "manifest.json").string()));
    std::map<std::string, int64_t> Dims;
    if (Manifest.contains("dims"))
      Dims = Manifest["dims"].get<std::map<std::string, int64_t>>();
    std::map<std::string, int64_t> LoopBounds;
    if (Manifest.contains("loop_bounds"))
      LoopBounds =
          Manifest["loop_bounds"].get<std::map<std::string, int64_t>>();
    auto M = compile(readFile((Dir / "model.onnx").string()), Dims, LoopBounds);
    if (!M)
      continue;
    Case C;
    for (size_t I = 0; I < M->inputs().size(); ++I) {
      std::string Bin =
          readFile((Dir / fmt::format("input_{}.bin", I)).string());
      bool Absent = Manifest["inputs"][I].value("absent", false);
      C.In.push_back({DType::F32, M->inputs()[I].Shape,
                      std::vector<uint8_t>(Bin.begin(), Bin.end()), Absent});
    }
    auto Got = run(*M, C);
    const auto &Names = Manifest["outputs"];
    ASSERT_EQ(Names.size(), Got.size());
    // An output whose shape the branch of an If picked: its first bytes.
    for (size_t I = 0; I < Got.size(); ++I) {
      int64_t Count = 1;
      for (int64_t D : M->outputShape(I))
        Count *= D;
      Got[I].resize(std::min<size_t>(Got[I].size(),
                                     Count * dtypeSize(M->outputs()[I].Ty)));
    }
    for (size_t I = 0; I < Got.size(); ++I) {
      fs::path RefPath = Dir / fmt::format("ref_{}.bin", I);
      if (!CUVIL_MODEL_REFERENCES && !fs::exists(RefPath))
        continue;
      std::string Ref = readFile(RefPath.string());
      ASSERT_EQ(Ref.size(), Got[I].size()) << "output " << I;
      // A quantized output may round a requantization unlike ONNX Runtime:
      // within two of its steps.
      std::string Name = Names[I].get<std::string>();
      double Step = Manifest.contains("lsb") && Manifest["lsb"].contains(Name)
                        ? Manifest["lsb"][Name].get<double>()
                        : 0;
      size_t N = Ref.size() / sizeof(float);
      std::vector<float> G(N), W(N);
      std::memcpy(G.data(), Got[I].data(), N * sizeof(float));
      std::memcpy(W.data(), Ref.data(), N * sizeof(float));
      for (size_t K = 0; K < N; ++K) {
        double Tol = Step ? 2.001 * Step : 1e-4 + 1e-3 * std::fabs(W[K]);
        ASSERT_LE(std::fabs(double(G[K]) - W[K]), Tol)
            << Name << " element " << K << ": got " << G[K] << ", ORT " << W[K];
      }
    }
  }
}
