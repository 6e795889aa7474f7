//===- OrtReference.h - ONNX Runtime's outputs for `cuvilc run` -*- C++ -*-===//
//
// `cuvilc run --compare-ort` compares the model's outputs with ONNX
// Runtime's on the same inputs. ONNX Runtime is not a Debian package: cuvil
// uses the npm package onnxruntime-node, which scripts/install-deps.sh
// installs into tests/reference/ of the source tree, through the same
// script that writes the tests' reference outputs (run_ort.js: CPU, one
// thread, graph optimisations off). It is found in cuvil's data directory
// (runner/Process.h cuvilHome), so --compare-ort works from a source
// checkout whose dependencies are installed, and says what is missing
// elsewhere.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNNER_ORTREFERENCE_H
#define CUVIL_RUNNER_ORTREFERENCE_H

#include "runner/HostRunner.h"

#include <llvm/Support/Error.h>
#include <ostream>
#include <string>
#include <vector>

namespace cuvil {

/// ONNX Runtime's outputs (raw float32 bytes, one per output) of the model
/// in OnnxBytes for the inputs InData (raw bytes, one per input). The
/// model's inputs and outputs must be float32 (what run_ort.js feeds and
/// reads). KeepWork: a directory to keep the files in (empty: temporary).
llvm::Expected<std::vector<std::string>>
ortOutputs(const std::string &OnnxBytes, const std::vector<RunnerTensor> &Ins,
           const std::vector<std::string> &InData,
           const std::vector<RunnerTensor> &Outs, const std::string &KeepWork,
           std::ostream &Log);

} // namespace cuvil

#endif
