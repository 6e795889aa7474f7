//===- CalibrationData.h - The calibration set of quantize ----*- C++ -*-===//
//
// `cuvilc quantize --calibrate DIR` runs the float model on the samples of
// DIR and records the range of every tensor. DIR is laid out in one of two
// ways (files and subdirectories are taken in byte order of their names):
//
//  - Files directly in DIR, for a model with one input: every .npy or .pb
//    (ONNX TensorProto) file is one sample of the input's shape, or a batch
//    of k samples: its first dimension k times the input's first dimension
//    (e.g. [32x3x96x96] for an input [1x3x96x96]), or one more dimension
//    in front ([32x1x3x96x96]). DIR may also name a single such file.
//  - One subdirectory per sample, each holding one file per model input:
//    `<input name>.npy` or `<input name>.pb`, else `input_<i>.npy` or
//    `input_<i>.pb` (i the input's position, as ONNX's test data sets
//    name them; the files they hold besides, e.g. output_0.pb, are
//    ignored). A subdirectory's files may be batches of k samples too, the
//    same k for every input.
//
// Hidden files (names starting with '.') are ignored. Everything else must
// fit: an error names the file and says why (unknown dtype, shape that
// does not match the input, truncated data, missing input file, ...).
//
// Element types: a file of the input's type is taken as it is; float16/32/
// 64 files convert to a float32 or float64 input, integer files to an
// integer input when every value fits (an int64 file for an int32 input,
// e.g.). A float file for an integer input or an integer file for a float
// input is refused: the conversion (normalisation of uint8 pixels, say) is
// the model's business, not a guess of the reader.
//
// A negative dimension of the input's shape (cuvil's UnknownDim) accepts
// any size there.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_CALIBRATIONDATA_H
#define CUVIL_QUANTIZE_CALIBRATIONDATA_H

#include "ir/DType.h"

#include <cstdint>
#include <llvm/Support/Error.h>
#include <string>
#include <vector>

namespace cuvil::quant {

/// A model input as the calibration set must provide it.
struct ModelInput {
  std::string Name;
  DType Ty;
  std::vector<int64_t> Shape;
};

/// One calibration sample: one buffer per model input, in the input's
/// type, Shape's element count.
using Sample = std::vector<std::vector<uint8_t>>;

/// Reads the calibration set in Dir (see the file comment) for Inputs.
llvm::Expected<std::vector<Sample>>
readCalibrationSet(const std::string &Dir,
                   const std::vector<ModelInput> &Inputs);

} // namespace cuvil::quant

#endif
