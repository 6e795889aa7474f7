//===- Npy.h - Tensors as numpy .npy files ----------------------*- C++ -*-===//
//
// `cuvilc run` reads its inputs and references from .npy files (through the
// reader `cuvilc quantize` already uses, quantize/TensorFile.h) and writes
// the model's outputs as .npy files, which is what this file does: numpy's
// format 1.0 (2.0 when the header needs more than 64 KiB), C order,
// little-endian. It also reads single elements of such dense buffers as
// numbers, for printing and comparing outputs of any element type.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNNER_NPY_H
#define CUVIL_RUNNER_NPY_H

#include "ir/DType.h"

#include <cstddef>
#include <cstdint>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <string>
#include <vector>

namespace cuvil {

/// The numpy descr of T ("<f4", "|u1", "|b1"). numpy has no bfloat16:
/// BF16 has none (see npyBytes).
llvm::Expected<std::string> npyDescr(DType T);

/// The bytes of a .npy file holding Data (dense, C order, little-endian,
/// exactly the shape's size) as an array of T and Shape. A BF16 tensor is
/// written as float32, the nearest type numpy reads: every bfloat16 value
/// is exactly a float32.
llvm::Expected<std::string> npyBytes(DType T, const std::vector<int64_t> &Shape,
                                     llvm::StringRef Data);

/// Writes npyBytes() to Path; errors name the file.
llvm::Error writeNpyFile(const std::string &Path, DType T,
                         const std::vector<int64_t> &Shape,
                         llvm::StringRef Data);

/// Element I of a dense little-endian buffer of T, as a double (exact for
/// every type but 64-bit integers beyond 2^53).
double elementValue(DType T, const uint8_t *Data, size_t I);

/// Stores V as element I of a dense little-endian buffer of T (rounded to
/// nearest for the float types, truncated for the integers, V != 0 for
/// bool). V must lie in the range of an integer T.
void setElementValue(DType T, uint8_t *Data, size_t I, double V);

} // namespace cuvil

#endif
