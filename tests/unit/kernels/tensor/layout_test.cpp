//===- layout_test.cpp - Transpose and copy kernels
//------------------------===//
//
// Permutations, byte copies and strided row copies, checked element by
// element.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "kernels/math.h"

#include <cfloat>

using namespace kernel_test;

namespace {

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

struct TransposeCase {
  const char *Name;
  Shape In, Perm;
};

class TransposeTest : public testing::TestWithParam<TransposeCase> {};

TEST_P(TransposeTest, MatchesReference) {
  const TransposeCase &P = GetParam();
  const size_t Rank = P.In.size();
  std::mt19937 Rng(26);
  std::vector<uint32_t> X(numElements(P.In));
  for (uint32_t &E : X)
    E = Rng(); // any bit pattern, NaNs included, must move unchanged

  // Output dimension d is input dimension Perm[d].
  const Shape InStr = denseStrides(P.In);
  Shape OutShape(Rank), OutInStr(Rank);
  for (size_t D = 0; D < Rank; ++D) {
    OutShape[D] = P.In[P.Perm[D]];
    OutInStr[D] = InStr[P.Perm[D]];
  }
  std::vector<uint32_t> Y(X.size());
  cuvil_k_transpose_b32(X.data(), Y.data(), padLeft(OutShape, 1).data(),
                        padLeft(OutInStr, 0).data());

  const Shape OutStr = denseStrides(OutShape);
  std::vector<uint32_t> Want(X.size());
  for (int64_t L = 0; L < int64_t(X.size()); ++L) {
    int64_t Src = 0;
    for (size_t D = 0; D < Rank; ++D)
      Src += L / OutStr[D] % OutShape[D] * InStr[P.Perm[D]];
    Want[L] = X[Src];
  }
  EXPECT_EQ(Y, Want);
}

const TransposeCase TransposeCases[] = {
    {"Perm4d", {2, 3, 4, 5}, {2, 0, 3, 1}},
    {"NchwToNhwc", {2, 3, 4, 5}, {0, 2, 3, 1}},
    {"Perm6d", {3, 1, 2, 4, 2, 3}, {5, 3, 1, 0, 4, 2}},
    {"Matrix", {7, 9}, {1, 0}},
};
INSTANTIATE_TEST_SUITE_P(Kernels, TransposeTest,
                         testing::ValuesIn(TransposeCases),
                         caseName<TransposeCase>);

std::vector<unsigned char> bytePattern(size_t N) {
  std::vector<unsigned char> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = (unsigned char)(I * 7 + 1);
  return V;
}

TEST(Copy, CopiesUnalignedBytes) {
  const auto Src = bytePattern(64);
  std::vector<unsigned char> Dst(64, 0xaa);
  cuvil_k_copy(Src.data() + 1, Dst.data() + 3, 37);
  for (size_t I = 0; I < Dst.size(); ++I)
    EXPECT_EQ(Dst[I], I >= 3 && I < 40 ? Src[I - 2] : 0xaa) << "byte " << I;
}

TEST(Copy, SameBufferIsUnchanged) {
  auto Buf = bytePattern(32);
  cuvil_k_copy(Buf.data(), Buf.data(), int64_t(Buf.size()));
  EXPECT_EQ(Buf, bytePattern(32));
}

TEST(CopyRows, SlicesIntoStridedDestination) {
  // Rows 1..4, bytes [4, 14) of a [6, 24] source go to rows of 16 bytes,
  // at byte 2 of each.
  const int64_t SrcStride = 24, DstStride = 16, Rows = 4, RowBytes = 10;
  const auto Src = bytePattern(6 * SrcStride);
  std::vector<unsigned char> Dst(Rows * DstStride, 0xaa);
  cuvil_k_copy_rows(Src.data() + SrcStride + 4, Dst.data() + 2, Rows, RowBytes,
                    SrcStride, DstStride);
  for (int64_t R = 0; R < Rows; ++R)
    for (int64_t B = 0; B < DstStride; ++B) {
      const bool Copied = B >= 2 && B < 2 + RowBytes;
      EXPECT_EQ(Dst[R * DstStride + B],
                Copied ? Src[(R + 1) * SrcStride + 4 + B - 2] : 0xaa)
          << "row " << R << " byte " << B;
    }
}

} // namespace
