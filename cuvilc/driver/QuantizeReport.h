//===- QuantizeReport.h - What cuvilc quantize did, as text and JSON -*- C++
//-*-===//
#ifndef CUVIL_DRIVER_QUANTIZEREPORT_H
#define CUVIL_DRIVER_QUANTIZEREPORT_H

#include "quantize/Accuracy.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

struct QuantizeReport {
  struct Output {
    std::string Name;
    quant::OutputAccuracy Accuracy;
  };
  struct Node {
    std::string Name, Op;
    std::string Precision; ///< "int8" or "float".
    std::string Reason; ///< Why float: "--keep-float", "--max-accuracy-drop".
    double AloneSqnrDb; ///< With only this node quantized; NaN: not measured.
  };
  std::string Method;
  size_t CalibrationSamples = 0, EvaluationSamples = 0;
  std::string EvaluatedOn; ///< "calibration set" or "validation set".
  std::vector<Output> Outputs;
  std::vector<Node> Nodes;
  std::vector<std::string> Notes; ///< Nodes the quantizer could not take.
  std::optional<double> MaxAccuracyDrop;
  size_t KeptForAccuracy = 0;
};

/// Lines for the terminal: the precision of every node, the notes, and
/// the accuracy of each output against the float model.
std::string quantizeReportText(const QuantizeReport &R);
/// The same as a JSON document (--report).
std::string quantizeReportJson(const QuantizeReport &R);

} // namespace cuvil

#endif
