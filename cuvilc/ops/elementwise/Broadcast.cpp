//===- Broadcast.cpp ------------------------------------------------------===//
#include "ops/elementwise/Broadcast.h"

#include "ir/Diagnostic.h"

namespace cuvil {

llvm::Expected<BroadcastLoops>
broadcastLoops(const Node &N, const std::vector<int64_t> &OutShape,
               const std::vector<const Value *> &Operands, size_t PadToRank) {
  size_t R = OutShape.size();
  BroadcastLoops L;
  L.Shape = OutShape;
  for (const Value *V : Operands) {
    if (V->rank() > R)
      return nodeError(N, "input '{}' has a higher rank than the output",
                       V->name());
    std::vector<int64_t> Str(R, 0);
    int64_t Stride = 1;
    for (size_t I = 0; I < V->rank(); ++I) {
      size_t D = V->rank() - 1 - I, O = R - 1 - I;
      int64_t Dim = V->shape()[D];
      if (Dim != 1 && Dim != OutShape[O])
        return nodeError(N,
                         "input '{}' dimension {} ({}) does not broadcast "
                         "to {}",
                         V->name(), D, Dim, OutShape[O]);
      Str[O] = Dim == 1 ? 0 : Stride;
      Stride *= Dim;
    }
    L.Strides.push_back(std::move(Str));
  }
  // Drop unit dimensions, then merge dimension I into I+1 when every operand
  // is contiguous across the boundary (stride[I] == stride[I+1] * extent).
  std::vector<int64_t> Shape;
  std::vector<std::vector<int64_t>> Strides(Operands.size());
  for (size_t D = 0; D < R; ++D) {
    if (L.Shape[D] == 1)
      continue;
    bool Merge = !Shape.empty();
    for (size_t O = 0; O < Operands.size() && Merge; ++O)
      Merge = Strides[O].back() == L.Strides[O][D] * L.Shape[D];
    if (Merge) {
      Shape.back() *= L.Shape[D];
      for (size_t O = 0; O < Operands.size(); ++O)
        Strides[O].back() = L.Strides[O][D];
      continue;
    }
    Shape.push_back(L.Shape[D]);
    for (size_t O = 0; O < Operands.size(); ++O)
      Strides[O].push_back(L.Strides[O][D]);
  }
  if (Shape.size() > PadToRank)
    return nodeError(N,
                     "broadcast needs {} loop dimensions; at most {} are "
                     "supported",
                     Shape.size(), PadToRank);
  while (Shape.size() < PadToRank) {
    Shape.insert(Shape.begin(), 1);
    for (auto &S : Strides)
      S.insert(S.begin(), 0);
  }
  L.Shape = std::move(Shape);
  L.Strides = std::move(Strides);
  return L;
}

} // namespace cuvil
