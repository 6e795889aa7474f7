//===- CompileTime.cpp - Ops cuvil only evaluates at compile time ---------===//
//
// Shape and Size describe a tensor's shape. The fold-constants pass replaces
// them by constants (they need only a static input shape, which every value
// has after shape resolution), so one left in the graph is an error.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

llvm::Error verify(const Node &N) {
  return nodeError(N, "an input is computed at run time; cuvil evaluates {} "
                      "only at compile time, from constant inputs",
                   N.opType());
}

} // namespace

extern const OpDef ShapeOp = {"Shape", verify, nullptr, noMacs,
                              Placement::Fresh};
extern const OpDef SizeOp = {"Size", verify, nullptr, noMacs,
                             Placement::Fresh};

} // namespace cuvil
