//===- QuantModel.cpp - A float ONNX model being quantized ----------------===//
#include "quantize/QuantModel.h"

#include "ir/Diagnostic.h"
#include "quantize/Prepare.h"
#include "quantize/QdqWriter.h"

#include <onnx/onnx_pb.h>

#include <limits>

namespace cuvil::quant {

struct QuantModel::Impl {
  onnx::ModelProto M;
};

QuantModel::QuantModel() : I(std::make_unique<Impl>()) {}
QuantModel::~QuantModel() = default;

llvm::Expected<std::unique_ptr<QuantModel>>
QuantModel::open(std::string_view Bytes) {
  std::unique_ptr<QuantModel> Q(new QuantModel());
  if (Bytes.empty() ||
      Bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !Q->I->M.ParseFromArray(Bytes.data(), static_cast<int>(Bytes.size())) ||
      !Q->I->M.has_graph())
    return makeError("not an ONNX model (the file does not parse as an ONNX "
                     "ModelProto)");
  auto Folded = foldConvBatchNorm(Q->I->M);
  if (!Folded)
    return Folded.takeError();
  return Q;
}

llvm::Expected<QuantPlan> QuantModel::plan(const PlanOptions &O) const {
  try {
    return planQuantization(I->M, O);
  } catch (const std::exception &E) {
    return makeError("cannot analyse the model for quantization: {}", E.what());
  }
}

llvm::Expected<std::string>
QuantModel::calibrationModel(const QuantPlan &P) const {
  return quant::calibrationModel(I->M, P);
}

llvm::Expected<std::string>
QuantModel::quantizedModel(const QuantPlan &P,
                           const std::map<std::string, Range> &Ranges,
                           const std::string &Description) const {
  auto Q = writeQdqModel(I->M, P, Ranges, Description);
  if (!Q)
    return Q.takeError();
  std::string Bytes;
  if (!Q->SerializeToString(&Bytes))
    return makeError("cannot serialise the quantized model (over 2 GiB?)");
  return Bytes;
}

} // namespace cuvil::quant
