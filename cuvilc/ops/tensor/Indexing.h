//===- Indexing.h - Helpers shared by the indexing op files -----*- C++ -*-===//
//
// GatherScatter.cpp and IndexOps.cpp write each op as one function that
// checks the node and, given a call list, appends its kernel calls; these
// templates turn it into the OpDef's Verify and Lower.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_INDEXING_H
#define CUVIL_OPS_INDEXING_H

#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

namespace cuvil::indexing {

/// Checks N; appends its kernel calls when Calls is not null.
using RunFn = llvm::Error (*)(const Node &N, std::vector<KernelCall> *Calls);

template <RunFn Run> llvm::Error verifyWith(const Node &N) {
  return Run(N, nullptr);
}
template <RunFn Run>
llvm::Error lowerWith(const Node &N, std::vector<KernelCall> &Calls) {
  return Run(N, &Calls);
}

/// Product of S[From..To).
inline int64_t product(const std::vector<int64_t> &S, size_t From, size_t To) {
  int64_t P = 1;
  for (size_t I = From; I < To; ++I)
    P *= S[I];
  return P;
}

/// Elements of 1, 2, 4 or 8 bytes (the _b<bits> kernels).
inline llvm::Error checkBits(const Node &N, DType T) {
  unsigned S = dtypeSize(T);
  if (S != 1 && S != 2 && S != 4 && S != 8)
    return nodeError(N, "element type {} is not supported", dtypeName(T));
  return llvm::Error::success();
}

} // namespace cuvil::indexing

#endif
