//===- Binary.cpp - Add, Sub, Mul, Div with numpy broadcasting ------------===//
#include "ir/Diagnostic.h"
#include "ops/Broadcast.h"
#include "ops/OpRegistry.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

llvm::Expected<BroadcastLoops> loops(const Node &N) {
  if (!N.input(0) || !N.input(1))
    return nodeError(N, "needs two inputs");
  return broadcastLoops(N, N.output(0)->shape(), {N.input(0), N.input(1)},
                        CUVIL_MAX_RANK);
}

llvm::Error verify(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  return loops(N).takeError();
}

template <const char *Kernel>
llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
  auto L = loops(N);
  if (!L)
    return L.takeError();
  Calls.push_back({Kernel,
                   {KernelArg::tensor(N.input(0)), KernelArg::tensor(N.input(1)),
                    KernelArg::tensor(N.output(0)), KernelArg::array(L->Shape),
                    KernelArg::array(L->Strides[0]),
                    KernelArg::array(L->Strides[1])}});
  return llvm::Error::success();
}

constexpr char AddK[] = "cuvil_k_add_f32";
constexpr char SubK[] = "cuvil_k_sub_f32";
constexpr char MulK[] = "cuvil_k_mul_f32";
constexpr char DivK[] = "cuvil_k_div_f32";

} // namespace

// The planner lets the output reuse input 0 only when input 0 has the
// output's shape (it checks sizes), which is what the kernels allow.
extern const OpDef AddOp = {"Add", verify, lower<AddK>, noMacs,
                            Placement::InPlace};
extern const OpDef SubOp = {"Sub", verify, lower<SubK>, noMacs,
                            Placement::InPlace};
extern const OpDef MulOp = {"Mul", verify, lower<MulK>, noMacs,
                            Placement::InPlace};
extern const OpDef DivOp = {"Div", verify, lower<DivK>, noMacs,
                            Placement::InPlace};

} // namespace cuvil
