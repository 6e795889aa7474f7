//===- Pool.cpp - MaxPool, AveragePool, GlobalAveragePool -----------------===//
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"
#include "ops/Spatial.h"

namespace cuvil {
namespace {

llvm::Error verifyWindowed(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  if (N.outputs().size() > 1)
    return nodeError(N, "the Indices output is not supported");
  if (N.getInt("storage_order", 0) != 0)
    return nodeError(N, "storage_order=1 is not supported");
  auto Wd = computeWindow(N, *N.input(0), *N.output(0), {}, true);
  if (!Wd)
    return Wd.takeError();
  if (N.opType() == "AveragePool" && (Wd->DH != 1 || Wd->DW != 1))
    return nodeError(N, "dilated AveragePool is not supported");
  return llvm::Error::success();
}

int64_t nc(const Node &N) {
  return N.input(0)->shape()[0] * N.input(0)->shape()[1];
}

llvm::Error lowerMax(const Node &N, std::vector<KernelCall> &Calls) {
  auto Wd = computeWindow(N, *N.input(0), *N.output(0), {}, true);
  if (!Wd)
    return Wd.takeError();
  Calls.push_back(
      {"cuvil_k_maxpool2d_f32",
       {KernelArg::tensor(N.input(0)), KernelArg::tensor(N.output(0)),
        KernelArg::i(nc(N)), KernelArg::i(Wd->H), KernelArg::i(Wd->W),
        KernelArg::i(Wd->OH), KernelArg::i(Wd->OW), KernelArg::i(Wd->KH),
        KernelArg::i(Wd->KW), KernelArg::i(Wd->SH), KernelArg::i(Wd->SW),
        KernelArg::i(Wd->DH), KernelArg::i(Wd->DW), KernelArg::i(Wd->PadT),
        KernelArg::i(Wd->PadL)}});
  return llvm::Error::success();
}

llvm::Error lowerAvg(const Node &N, std::vector<KernelCall> &Calls) {
  auto Wd = computeWindow(N, *N.input(0), *N.output(0), {}, true);
  if (!Wd)
    return Wd.takeError();
  Calls.push_back(
      {"cuvil_k_avgpool2d_f32",
       {KernelArg::tensor(N.input(0)), KernelArg::tensor(N.output(0)),
        KernelArg::i(nc(N)), KernelArg::i(Wd->H), KernelArg::i(Wd->W),
        KernelArg::i(Wd->OH), KernelArg::i(Wd->OW), KernelArg::i(Wd->KH),
        KernelArg::i(Wd->KW), KernelArg::i(Wd->SH), KernelArg::i(Wd->SW),
        KernelArg::i(Wd->PadT), KernelArg::i(Wd->PadL), KernelArg::i(Wd->PadB),
        KernelArg::i(Wd->PadR),
        KernelArg::i(N.getInt("count_include_pad", 0))}});
  return llvm::Error::success();
}

llvm::Error verifyGlobal(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  if (N.input(0)->rank() < 3)
    return nodeError(N, "input must have rank >= 3");
  return llvm::Error::success();
}

llvm::Error lowerGlobalAvg(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0);
  Calls.push_back({"cuvil_k_global_avgpool_f32",
                   {KernelArg::tensor(X), KernelArg::tensor(N.output(0)),
                    KernelArg::i(nc(N)),
                    KernelArg::i(X->numElements() / nc(N))}});
  return llvm::Error::success();
}

} // namespace

extern const OpDef MaxPoolOp = {"MaxPool", verifyWindowed, lowerMax, noMacs,
                                Placement::Fresh};
extern const OpDef AveragePoolOp = {"AveragePool", verifyWindowed, lowerAvg,
                                    noMacs, Placement::Fresh};
extern const OpDef GlobalAveragePoolOp = {"GlobalAveragePool", verifyGlobal,
                                          lowerGlobalAvg, noMacs,
                                          Placement::Fresh};

} // namespace cuvil
