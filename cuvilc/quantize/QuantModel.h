//===- QuantModel.h - A float ONNX model being quantized --------*- C++ -*-===//
//
// The quantizer's view of the user's model, for callers that do not use
// ONNX's protobuf types (the driver is built without exceptions): the
// plan, the model calibration runs, and the QDQ model for given ranges.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_QUANTMODEL_H
#define CUVIL_QUANTIZE_QUANTMODEL_H

#include "quantize/QuantPlan.h"
#include "quantize/RangeEstimator.h"

#include <llvm/Support/Error.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace cuvil::quant {

class QuantModel {
public:
  /// Bytes: a .onnx file's contents.
  static llvm::Expected<std::unique_ptr<QuantModel>>
  open(std::string_view Bytes);
  ~QuantModel();

  /// The plan when the nodes of O.KeepFloat stay float.
  llvm::Expected<QuantPlan> plan(const PlanOptions &O) const;
  /// The float model with P's calibrated tensors as extra outputs.
  llvm::Expected<std::string> calibrationModel(const QuantPlan &P) const;
  /// The QDQ model (serialised) for P and the calibrated ranges.
  llvm::Expected<std::string>
  quantizedModel(const QuantPlan &P, const std::map<std::string, Range> &Ranges,
                 const std::string &Description) const;

private:
  struct Impl;
  std::unique_ptr<Impl> I;
  QuantModel();
};

} // namespace cuvil::quant

#endif
