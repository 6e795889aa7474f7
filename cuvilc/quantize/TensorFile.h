//===- TensorFile.h - One tensor from a .npy or ONNX .pb file ---*- C++ -*-===//
//
// The calibration inputs of `cuvilc quantize` come as numpy .npy files or
// as serialized ONNX TensorProto (.pb) files, as ONNX's test data sets hold
// them. Both are read here into a dense little-endian buffer with cuvil's
// element type and the file's shape; CalibrationData matches them with the
// model's inputs.
//
// .npy: format versions 1.0, 2.0 and 3.0; the header's descr must be a
// little-endian (or byte-order-free) float ('f2', 'f4', 'f8'), signed or
// unsigned integer (1, 2, 4 or 8 bytes) or bool ('b1'); fortran_order must
// be False (C order); the data must be exactly the shape's size.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_TENSORFILE_H
#define CUVIL_QUANTIZE_TENSORFILE_H

#include "ir/DType.h"

#include <cstdint>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <string>
#include <vector>

namespace cuvil::quant {

/// A tensor as a file holds it.
struct FileTensor {
  DType Ty = DType::F32;
  std::vector<int64_t> Shape;
  std::vector<uint8_t> Data; ///< Dense, C order, little-endian.
};

/// "[1x3x8x8]" ('?' for a negative, i.e. any, dimension), for messages.
std::string shapeText(const std::vector<int64_t> &Shape);

/// Parses the bytes of a .npy file; errors say what is wrong, not where
/// (readTensorFile prefixes the file's name).
llvm::Expected<FileTensor> parseNpy(llvm::StringRef Bytes);
/// Parses the bytes of a serialized ONNX TensorProto.
llvm::Expected<FileTensor> parseTensorProto(llvm::StringRef Bytes);

/// Whether Path names a tensor file this reader knows (.npy or .pb).
bool isTensorFile(llvm::StringRef Path);
/// Reads a .npy or .pb file; every error starts with "'<Path>': ".
llvm::Expected<FileTensor> readTensorFile(const std::string &Path);

} // namespace cuvil::quant

#endif
