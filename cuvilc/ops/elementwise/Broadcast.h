//===- Broadcast.h - numpy broadcasting for element-wise kernels -*- C++
//-*-===//
#ifndef CUVIL_OPS_BROADCAST_H
#define CUVIL_OPS_BROADCAST_H

#include "ir/Graph.h"

#include <llvm/Support/Error.h>
#include <vector>

namespace cuvil {

/// An output shape and, per operand, the element stride along each output
/// dimension (0 where the operand is broadcast). Adjacent dimensions that
/// every operand walks contiguously are merged, so a same-shape operation
/// becomes one flat loop.
struct BroadcastLoops {
  std::vector<int64_t> Shape;
  std::vector<std::vector<int64_t>> Strides;
};

llvm::Expected<BroadcastLoops>
broadcastLoops(const Node &N, const std::vector<int64_t> &OutShape,
               const std::vector<const Value *> &Operands, size_t PadToRank);

} // namespace cuvil

#endif
