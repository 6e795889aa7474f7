//===- CompileTime.cpp - Ops cuvil only evaluates at compile time ---------===//
//
// Shape and Size describe a tensor's shape. The fold-constants pass replaces
// them by constants (they need only a static input shape, which every value
// has after shape resolution), so one left in the graph is an error.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "ops/Attrs.h"
#include "ops/HostTensor.h"
#include "ops/OpRegistry.h"

namespace cuvil {
namespace {

// end's default is the rank, which the clamp below gives INT64_MAX.
#define SHAPE_ATTRS(X) X(Start, "start", Int, 0) X(End, "end", Int, INT64_MAX)
CUVIL_OP_ATTRS(ShapeAttrs, SHAPE_ATTRS)

llvm::Error verifyCompileTimeOp(const Node &N) {
  return nodeError(N,
                   "an input is computed at run time; cuvil evaluates {} "
                   "only at compile time, from constant inputs",
                   N.opType());
}

llvm::Expected<bool> foldShape(const Node &N, const HostInputs &In,
                               std::vector<HostTensor> &Out) {
  int64_t R = In[0]->Shape.size();
  auto Clamp = [R](int64_t X) {
    return std::clamp<int64_t>(X < 0 ? X + R : X, 0, R);
  };
  ShapeAttrs A(N);
  int64_t B = Clamp(A.Start), E = Clamp(A.End);
  Out[0].Shape = {std::max<int64_t>(E - B, 0)};
  Out[0].allocate();
  for (int64_t I = B; I < E; ++I)
    putI(Out[0], I - B, In[0]->Shape[I]);
  return true;
}

llvm::Expected<bool> foldSize(const Node &, const HostInputs &In,
                              std::vector<HostTensor> &Out) {
  Out[0].Shape = {};
  Out[0].allocate();
  putI(Out[0], 0, In[0]->count());
  return true;
}

} // namespace

extern const OpDef ShapeOp = {.Name = "Shape",
                              .Verify = verifyCompileTimeOp,
                              .Lower = nullptr,
                              .Macs = noMacs,
                              .Traits = NoTraits,
                              .Fold = foldShape,
                              .FoldShapeOnly = true,
                              .Attrs = ShapeAttrs::Specs};
extern const OpDef SizeOp = {.Name = "Size",
                             .Verify = verifyCompileTimeOp,
                             .Lower = nullptr,
                             .Macs = noMacs,
                             .Traits = NoTraits,
                             .Fold = foldSize,
                             .FoldShapeOnly = true};

} // namespace cuvil
