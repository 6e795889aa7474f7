//===- GemmShares.cpp - The packed Gemm cut into per-core shares ----------===//
//
// OpDef::Split of cuvil.PackedGemm (--cores): each share computes either a
// range of whole panels of output columns (the kernel's j0/j1; it reads all
// of A) or, when A is not transposed, a range of output rows (A, C and Y
// moved to the range's first row, m the range's length), whichever leaves
// the largest share smaller. A fully connected layer at batch 1 has one
// row: it splits by columns.
//
//===----------------------------------------------------------------------===//
#include "lowering/KernelAbi.h"
#include "ops/Shares.h"
#include "ops/linalg/Gemm.h"

namespace cuvil {

void splitPackedGemm(const Node &N, const std::vector<KernelCall> &Calls,
                     int64_t Panel, int64_t Parts,
                     std::vector<std::vector<KernelCall>> &Shares) {
  (void)N; // the calls say everything
  if (Calls.size() != 1 || Calls[0].Kernel != kabi::GemmPackedF32::Name)
    return;
  const auto K = kabi::GemmPackedF32::from(Calls[0]);
  const auto Columns = shareRanges(K.j1 - K.j0, Panel, Parts);
  // A transposed A has the whole m in its column stride: no row shares.
  const auto Rows = K.trans_a ? ShareRanges() : shareRanges(K.m, 1, Parts);
  if (largestShare(Rows, K.m) < largestShare(Columns, K.j1 - K.j0)) {
    const bool RowsOfC = K.c.K == KernelArg::Kind::Tensor && K.c_rs != 0;
    for (auto [I0, I1] : Rows) {
      auto S = K;
      S.a = atFloat(K.a, I0 * K.k);
      S.c = RowsOfC ? atFloat(K.c, I0 * K.c_rs) : K.c;
      S.y = atFloat(K.y, I0 * K.n);
      S.m = I1 - I0;
      Shares.push_back({S.call()});
    }
    return;
  }
  for (auto [J0, J1] : Columns) {
    auto S = K;
    S.j0 = K.j0 + J0;
    S.j1 = K.j0 + J1;
    Shares.push_back({S.call()});
  }
}

} // namespace cuvil
