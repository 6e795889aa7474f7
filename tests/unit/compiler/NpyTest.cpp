//===- NpyTest.cpp - .npy files of `cuvilc run` ---------------------------===//
//
// The writer (runner/Npy.h) against the reader `cuvilc run` and `cuvilc
// quantize` share (quantize/TensorFile.h): every type and shape round-trips,
// and what the reader must refuse (damaged headers, short or long data,
// Fortran order) is refused with a reason.
//
//===----------------------------------------------------------------------===//
#include "runner/Npy.h"
#include "quantize/TensorFile.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace cuvil {
namespace {

/// Data of N elements of T, each a distinct small value.
std::string sample(DType T, size_t N) {
  std::string D(N * dtypeSize(T), '\0');
  for (size_t I = 0; I < N; ++I)
    setElementValue(T, reinterpret_cast<uint8_t *>(D.data()), I,
                    T == DType::Bool ? double(I % 2) : double(I % 7));
  return D;
}

std::string errorOf(llvm::Expected<quant::FileTensor> T) {
  return T ? std::string() : llvm::toString(T.takeError());
}

std::string validNpy() {
  auto B = npyBytes(DType::F32, {2, 3}, sample(DType::F32, 6));
  EXPECT_TRUE(bool(B));
  return B ? *B : std::string();
}

TEST(Npy, EveryTypeAndShapeRoundTrips) {
  const DType Types[] = {DType::F32, DType::F16, DType::F64, DType::I8,
                         DType::U8,  DType::I16, DType::U16, DType::I32,
                         DType::U32, DType::I64, DType::U64, DType::Bool};
  const std::vector<int64_t> Shapes[] = {{}, {5}, {2, 3}, {1, 0, 4}};
  for (DType T : Types)
    for (const auto &Shape : Shapes) {
      size_t N = 1;
      for (int64_t D : Shape)
        N *= static_cast<size_t>(D);
      std::string Data = sample(T, N);
      auto Bytes = npyBytes(T, Shape, Data);
      ASSERT_TRUE(bool(Bytes)) << llvm::toString(Bytes.takeError());
      // numpy's layout: version 1.0, data on a 64-byte boundary.
      EXPECT_EQ((*Bytes)[6], 1);
      EXPECT_EQ((Bytes->size() - Data.size()) % 64, 0u);
      auto F = quant::parseNpy(*Bytes);
      ASSERT_TRUE(bool(F)) << dtypeName(T) << ": "
                           << llvm::toString(F.takeError());
      EXPECT_EQ(F->Ty, T);
      EXPECT_EQ(F->Shape, Shape);
      EXPECT_EQ(std::string(F->Data.begin(), F->Data.end()), Data);
    }
}

TEST(Npy, OneDimensionalShapeIsATuple) {
  auto B = npyBytes(DType::I64, {3}, sample(DType::I64, 3));
  ASSERT_TRUE(bool(B));
  EXPECT_NE(B->find("'shape': (3,)"), std::string::npos);
  EXPECT_NE(B->find("'descr': '<i8'"), std::string::npos);
}

TEST(Npy, LongHeaderUsesVersion2) {
  // 30000 dimensions of 1: a header over version 1.0's 64 KiB.
  std::vector<int64_t> Shape(30000, 1);
  auto B = npyBytes(DType::U8, Shape, std::string(1, '\x2a'));
  ASSERT_TRUE(bool(B));
  EXPECT_EQ((*B)[6], 2);
  auto F = quant::parseNpy(*B);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  EXPECT_EQ(F->Shape, Shape);
  EXPECT_EQ(F->Data, std::vector<uint8_t>{0x2a});
}

TEST(Npy, BFloat16IsWrittenAsFloat32) {
  std::string Data(4, '\0');
  auto *P = reinterpret_cast<uint8_t *>(Data.data());
  setElementValue(DType::BF16, P, 0, 1.5);
  setElementValue(DType::BF16, P, 1, -256);
  auto B = npyBytes(DType::BF16, {2}, Data);
  ASSERT_TRUE(bool(B));
  auto F = quant::parseNpy(*B);
  ASSERT_TRUE(bool(F));
  EXPECT_EQ(F->Ty, DType::F32);
  EXPECT_EQ(elementValue(DType::F32, F->Data.data(), 0), 1.5);
  EXPECT_EQ(elementValue(DType::F32, F->Data.data(), 1), -256);
}

TEST(Npy, ElementValues) {
  uint8_t Buf[16] = {};
  setElementValue(DType::F16, Buf, 1, 0.1);
  EXPECT_NEAR(elementValue(DType::F16, Buf, 1), 0.1, 1e-4);
  setElementValue(DType::I8, Buf, 3, -5);
  EXPECT_EQ(elementValue(DType::I8, Buf, 3), -5);
  setElementValue(DType::Bool, Buf, 7, 3);
  EXPECT_EQ(Buf[7], 1);
  setElementValue(DType::I64, Buf, 1, -1234567);
  EXPECT_EQ(elementValue(DType::I64, Buf, 1), -1234567);
}

TEST(Npy, WriterRefusesBadData) {
  auto B = npyBytes(DType::F32, {2, 2}, std::string(12, '\0'));
  ASSERT_FALSE(bool(B));
  EXPECT_EQ(llvm::toString(B.takeError()),
            "12 bytes of data for 4 elements of f32");
  B = npyBytes(DType::F32, {-1}, "");
  ASSERT_FALSE(bool(B));
  EXPECT_EQ(llvm::toString(B.takeError()),
            "negative dimension -1 in the shape");
}

TEST(Npy, ReaderRefusesDamagedFiles) {
  std::string Good = validNpy();
  // Data one byte short, or one byte long.
  EXPECT_NE(errorOf(quant::parseNpy(Good.substr(0, Good.size() - 1)))
                .find("truncated: holds 23 bytes of data, shape [2x3] of "
                      "<f4 needs 24"),
            std::string::npos);
  EXPECT_NE(errorOf(quant::parseNpy(Good + "x")).find("trailing bytes"),
            std::string::npos);
  // The header cut short, or no header at all.
  EXPECT_NE(errorOf(quant::parseNpy(Good.substr(0, 40))).find("truncated"),
            std::string::npos);
  EXPECT_NE(errorOf(quant::parseNpy(Good.substr(0, 9))).find("truncated"),
            std::string::npos);
  // Not numpy's magic; an unknown version; Fortran order; a bad dict; a
  // big-endian type.
  auto Replace = [&](const std::string &Old, const std::string &New) {
    std::string S = Good;
    return S.replace(S.find(Old), Old.size(), New);
  };
  const std::pair<std::string, const char *> Cases[] = {
      {Replace("NUMPY", "NXMPY"), "not a .npy file"},
      {Replace(std::string("\x01\0", 2), std::string("\x09\0", 2)),
       "version 9.0"},
      {Replace("False", "True "), "Fortran order"},
      {Replace("{", "["), "expected '{'"},
      {Replace("<f4", ">f4"), "big-endian"}};
  for (const auto &[Bytes, Why] : Cases)
    EXPECT_NE(errorOf(quant::parseNpy(Bytes)).find(Why), std::string::npos)
        << Why;
}

TEST(Npy, WriteFileErrorsNameTheFile) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("npy-test", Dir));
  std::string Path = (Dir + "/no/such/dir/x.npy").str();
  auto E = writeNpyFile(Path, DType::U8, {1}, std::string(1, '\0'));
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("'" + Path + "': cannot write"),
            std::string::npos);
  std::string Good = (Dir + "/x.npy").str();
  ASSERT_FALSE(
      bool(writeNpyFile(Good, DType::I32, {2}, sample(DType::I32, 2))));
  auto T = quant::readTensorFile(Good);
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  EXPECT_EQ(T->Shape, std::vector<int64_t>{2});
  llvm::sys::fs::remove_directories(Dir);
}

} // namespace
} // namespace cuvil
