//===- CalibrationDataTest.cpp - .npy/.pb calibration inputs --------------===//
#include "quantize/CalibrationData.h"
#include "quantize/TensorFile.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <onnx/onnx_pb.h>

namespace cuvil::quant {
namespace {

/// A .npy file as numpy's format describes it (the header padded with
/// spaces and a newline to a multiple of 64 bytes).
std::string npy(const std::string &Descr, const std::string &Shape,
                const void *Data, size_t Bytes, int Major = 1,
                const std::string &Fortran = "False") {
  std::string Header = "{'descr': '" + Descr +
                       "', 'fortran_order': " + Fortran +
                       ", 'shape': " + Shape + ", }";
  size_t Prefix = Major == 1 ? 10 : 12;
  while ((Prefix + Header.size() + 1) % 64)
    Header += ' ';
  Header += '\n';
  std::string F = "\x93NUMPY";
  F += static_cast<char>(Major);
  F += '\0';
  for (size_t I = 0; I < Prefix - 8; ++I)
    F += static_cast<char>((Header.size() >> (8 * I)) & 0xff);
  F += Header;
  F.append(static_cast<const char *>(Data), Bytes);
  return F;
}

template <typename T>
std::string npyOf(const std::string &Descr, const std::string &Shape,
                  const std::vector<T> &V, int Major = 1) {
  return npy(Descr, Shape, V.data(), V.size() * sizeof(T), Major);
}

std::string tensorProto(int32_t Type, const std::vector<int64_t> &Dims,
                        const void *Data, size_t Bytes) {
  onnx::TensorProto P;
  P.set_data_type(Type);
  for (int64_t D : Dims)
    P.add_dims(D);
  P.set_raw_data(std::string(static_cast<const char *>(Data), Bytes));
  return P.SerializeAsString();
}

template <typename T> std::vector<T> as(const std::vector<uint8_t> &B) {
  std::vector<T> V(B.size() / sizeof(T));
  std::memcpy(V.data(), B.data(), B.size());
  return V;
}

bool Has(const std::string &Msg, const std::string &Part) {
  return Msg.find(Part) != std::string::npos;
}

/// A fresh directory per test; files written into it by put().
class CalibrationDataTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> P;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("cuvil-calib", P));
    Dir = P.str().str();
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  std::string put(const std::string &Rel, const std::string &Bytes) {
    std::string Path = Dir + "/" + Rel;
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(Path));
    std::ofstream(Path, std::ios::binary) << Bytes;
    return Path;
  }

  /// The message of the error readCalibrationSet gives, or "" on success.
  std::string error(const std::vector<ModelInput> &Inputs) {
    auto S = readCalibrationSet(Dir, Inputs);
    return S ? "" : llvm::toString(S.takeError());
  }

  std::string Dir;
};

/// A file numpy 1.24 wrote: np.save(f, np.array([[1.5, -2, 0.25],
/// [3, 4, -0.5]], dtype=np.float32)), as hex.
const char NumpyF32[] =
    "934e554d5059010076007b276465736372273a20273c6634272c2027666f7274"
    "72616e5f6f72646572273a2046616c73652c20277368617065273a2028322c20"
    "33292c207d202020202020202020202020202020202020202020202020202020"
    "202020202020202020202020202020202020202020202020202020202020200a"
    "0000c03f000000c00000803e0000404000008040000000bf";

TEST_F(CalibrationDataTest, ReadsAFileNumpyWrote) {
  std::string Bytes;
  for (size_t I = 0; I + 1 < sizeof(NumpyF32); I += 2)
    Bytes +=
        static_cast<char>(std::stoi(std::string(NumpyF32 + I, 2), nullptr, 16));
  auto T = parseNpy(Bytes);
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  EXPECT_EQ(T->Ty, DType::F32);
  EXPECT_EQ(T->Shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(as<float>(T->Data),
            (std::vector<float>{1.5f, -2, 0.25f, 3, 4, -0.5f}));
}

TEST_F(CalibrationDataTest, NpyVersionsAndTypes) {
  std::vector<int16_t> V = {-3, 7, 1000};
  for (int Major : {1, 2, 3}) {
    auto T = parseNpy(npyOf("<i2", "(3,)", V, Major));
    ASSERT_TRUE(bool(T)) << Major << ": " << llvm::toString(T.takeError());
    EXPECT_EQ(T->Ty, DType::I16);
    EXPECT_EQ(as<int16_t>(T->Data), V);
  }
  std::vector<uint8_t> B = {1, 0, 1, 1};
  auto T = parseNpy(npyOf("|b1", "(2, 2)", B));
  ASSERT_TRUE(bool(T));
  EXPECT_EQ(T->Ty, DType::Bool);
  // A scalar has the shape ().
  std::vector<double> D = {2.5};
  T = parseNpy(npyOf("<f8", "()", D));
  ASSERT_TRUE(bool(T));
  EXPECT_TRUE(T->Shape.empty());
  EXPECT_EQ(as<double>(T->Data), D);
}

TEST_F(CalibrationDataTest, NpyErrorsSayWhy) {
  std::vector<float> F = {1, 2, 3, 4};
  auto Why = [](const std::string &Bytes) {
    auto T = parseNpy(Bytes);
    return T ? std::string() : llvm::toString(T.takeError());
  };
  EXPECT_NE(
      Why(npy("<f4", "(2, 2)", F.data(), 16, 1, "True")).find("Fortran order"),
      std::string::npos);
  EXPECT_NE(Why(npyOf(">f4", "(4,)", F)).find("big-endian"), std::string::npos);
  EXPECT_NE(Why(npyOf("<c8", "(2,)", F)).find("unsupported dtype '<c8'"),
            std::string::npos);
  EXPECT_NE(Why(npyOf("<f4", "(5,)", F)).find("truncated"), std::string::npos);
  EXPECT_NE(Why(npyOf("<f4", "(3,)", F)).find("trailing"), std::string::npos);
  EXPECT_NE(Why("PK\x03\x04 not numpy").find("not a .npy"), std::string::npos);
  EXPECT_NE(Why(npyOf("<f4", "(4,)", F, 4)).find("version 4"),
            std::string::npos);
  std::string Rec = npyOf("<f4", "(4,)", F);
  Rec.replace(Rec.find("'<f4'"), 5, "[('a', '<f4')]");
  EXPECT_NE(Why(Rec).find("structured"), std::string::npos);
  EXPECT_NE(Why(npyOf("<f4", "(4, x)", F)).find("malformed header"),
            std::string::npos);
  EXPECT_NE(Why(npyOf("<f4", "(4,)", F).substr(0, 40)).find("truncated"),
            std::string::npos);
}

TEST_F(CalibrationDataTest, FilesOfOneInputSplitBatches) {
  std::vector<float> Batch = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  put("a.npy", npyOf("<f4", "(3, 4)", Batch));    // 3 samples of [1x4]
  std::vector<double> One = {0.5, 1.5, 2.5, 3.5}; // float64: converted
  put("b.npy", npyOf("<f8", "(1, 4)", One));
  std::vector<float> Stacked = {-1, -2, -3, -4, -5, -6, -7, -8};
  put("c.pb",
      tensorProto(onnx::TensorProto::FLOAT, {2, 1, 4}, Stacked.data(), 32));
  put(".hidden", "ignored");
  auto S = readCalibrationSet(Dir, {{"x", DType::F32, {1, 4}}});
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  ASSERT_EQ(S->size(), 6u);
  EXPECT_EQ(as<float>((*S)[0][0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(as<float>((*S)[2][0]), (std::vector<float>{9, 10, 11, 12}));
  EXPECT_EQ(as<float>((*S)[3][0]), (std::vector<float>{0.5, 1.5, 2.5, 3.5}));
  EXPECT_EQ(as<float>((*S)[5][0]), (std::vector<float>{-5, -6, -7, -8}));
  // DIR may be one file.
  auto One1 = readCalibrationSet(Dir + "/b.npy", {{"x", DType::F32, {1, 4}}});
  ASSERT_TRUE(bool(One1));
  EXPECT_EQ(One1->size(), 1u);
}

TEST_F(CalibrationDataTest, ConvertsWithinFloatsAndWithinIntegers) {
  std::vector<uint16_t> Half = {0x3c00, 0xc100, 0x3555}; // 1, -2.5, ~1/3
  put("h.npy", npyOf("<f2", "(3,)", Half));
  auto S = readCalibrationSet(Dir, {{"x", DType::F32, {3}}});
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_EQ(as<float>((*S)[0][0]),
            (std::vector<float>{1.0f, -2.5f, 0.333251953125f}));
  std::vector<uint8_t> Pixels = {0, 128, 255};
  put("h.npy", npyOf("|u1", "(3,)", Pixels));
  S = readCalibrationSet(Dir, {{"x", DType::I32, {3}}});
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_EQ(as<int32_t>((*S)[0][0]), (std::vector<int32_t>{0, 128, 255}));
  EXPECT_TRUE(Has(error({{"x", DType::I8, {3}}}),
                  "element 1 is 128, which i8 does not hold"));
  EXPECT_TRUE(Has(error({{"x", DType::F32, {3}}}),
                  "holds u8 values but input 'x' is f32; convert the data "
                  "as the model expects it (e.g. arr.astype(np.float32))"));
}

TEST_F(CalibrationDataTest, DynamicDimensionTakesAnySize) {
  std::vector<float> F(10, 1.0f);
  put("a.npy", npyOf("<f4", "(5, 2)", F));
  auto S = readCalibrationSet(Dir, {{"x", DType::F32, {-1, 2}}});
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  ASSERT_EQ(S->size(), 1u);
  EXPECT_EQ((*S)[0][0].size(), 40u);
}

TEST_F(CalibrationDataTest, SubdirectoriesWithTwoInputs) {
  std::vector<ModelInput> In = {{"x", DType::F32, {1, 2}},
                                {"y", DType::I64, {3}}};
  std::vector<float> X0 = {1, 2}, X1 = {3, 4};
  std::vector<int64_t> Y0 = {5, -6, 7};
  std::vector<int32_t> Y1 = {-8, 9, 10}; // int32 file, int64 input
  put("s0/x.npy", npyOf("<f4", "(1, 2)", X0));
  put("s0/y.pb", tensorProto(onnx::TensorProto::INT64, {3}, Y0.data(), 24));
  put("s1/input_0.pb",
      tensorProto(onnx::TensorProto::FLOAT, {1, 2}, X1.data(), 8));
  put("s1/input_1.npy", npyOf("<i4", "(3,)", Y1));
  put("s1/output_0.pb", "not read");
  put("model.onnx", "not read either");
  auto S = readCalibrationSet(Dir, In);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  ASSERT_EQ(S->size(), 2u);
  EXPECT_EQ(as<float>((*S)[0][0]), X0);
  EXPECT_EQ(as<int64_t>((*S)[0][1]), Y0);
  EXPECT_EQ(as<float>((*S)[1][0]), X1);
  EXPECT_EQ(as<int64_t>((*S)[1][1]), (std::vector<int64_t>{-8, 9, 10}));
}

TEST_F(CalibrationDataTest, OnnxTestDataSet) {
  // ONNX's own test data: input_<i>.pb beside output_0.pb, a model.onnx
  // next to the sample directory.
  const std::string Add = "/usr/share/libonnx-testdata/data/node/test_add";
  if (!llvm::sys::fs::is_directory(Add))
    GTEST_SKIP() << Add << " is not installed";
  auto S = readCalibrationSet(
      Add, {{"x", DType::F32, {3, 4, 5}}, {"y", DType::F32, {3, 4, 5}}});
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  ASSERT_EQ(S->size(), 1u);
  ASSERT_EQ((*S)[0][0].size(), 240u);
  EXPECT_FLOAT_EQ(as<float>((*S)[0][0])[0], 1.7640524f); // numpy's seed 0
}

TEST_F(CalibrationDataTest, ErrorsNameTheFileAndTheReason) {
  std::vector<ModelInput> X = {{"x", DType::F32, {1, 4}}};
  EXPECT_TRUE(Has(error(X), "holds no .npy or .pb")) << error(X);

  std::vector<float> F = {1, 2, 3, 4, 5, 6};
  put("a.npy", npyOf("<f4", "(2, 3)", F));
  std::string E = error(X);
  EXPECT_TRUE(Has(E, "a.npy': shape [2x3] does not match input 'x' of "
                     "shape [1x4]"))
      << E;
  put("a.npy", npyOf("<f4", "(1, 4)", F).substr(0, 140));
  EXPECT_TRUE(Has(error(X), "a.npy': truncated")) << error(X);

  put("a.npy", npyOf("<f4", "(1, 4)", std::vector<float>{1, 2, 3, 4}));
  E = error({{"x", DType::I32, {1, 4}}});
  EXPECT_TRUE(Has(E, "a.npy': holds f32 values but input 'x' is i32")) << E;
  std::vector<int64_t> Big = {1, 2, 3, int64_t(1) << 40};
  put("a.npy", npyOf("<i8", "(1, 4)", Big));
  E = error({{"x", DType::I32, {1, 4}}});
  EXPECT_TRUE(Has(E, "element 3 is 1099511627776, which i32 does not hold"))
      << E;
  E = error({{"x", DType::F32, {1, 4}}, {"y", DType::F32, {1}}});
  EXPECT_TRUE(Has(E, "this model has 2 ('x', 'y')")) << E;
  put("notes.txt", "hello");
  EXPECT_TRUE(Has(error({{"x", DType::I64, {1, 4}}}),
                  "notes.txt': not a .npy or .pb file"));

  put("s0/x.npy", npyOf("<f4", "(1, 4)", std::vector<float>{1, 2, 3, 4}));
  EXPECT_TRUE(Has(error(X), "holds both tensor files and subdirectories"));
}

TEST_F(CalibrationDataTest, SampleDirectoryErrors) {
  std::vector<ModelInput> In = {{"x", DType::F32, {1, 2}},
                                {"y", DType::F32, {2}}};
  std::vector<float> Two = {1, 2}, Four = {1, 2, 3, 4};
  put("s0/x.npy", npyOf("<f4", "(1, 2)", Two));
  std::string E = error(In);
  EXPECT_TRUE(Has(E, "s0' has no file for input 'y' (expected y.npy, y.pb, "
                     "input_1.npy or .pb)"))
      << E;
  put("s0/y.npy", npyOf("<f4", "(2, 2)", Four)); // 2 samples of y, 1 of x
  E = error(In);
  EXPECT_TRUE(Has(E, "y.npy' holds 2 samples but")) << E;
  put("s0/y.pb", "x");
  E = error(In);
  EXPECT_TRUE(Has(E, "both give input 'y'")) << E;
  EXPECT_TRUE(
      Has(llvm::toString(readCalibrationSet(Dir + "/none", In).takeError()),
          "cannot read calibration directory"));
}

} // namespace
} // namespace cuvil::quant
