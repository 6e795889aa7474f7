//===- SourceLocation.h - Where an ONNX node was written --------*- C++ -*-===//
//
// PyTorch's exporter (torch.onnx.export(..., verbose=True)) writes the
// Python stack a node was traced from into its doc_string, one frame per
// line, innermost first: "FILE(LINE): FUNCTION". The innermost frames are
// usually PyTorch's own (nn/modules/linear.py for a Linear): the user's
// line is the first frame outside the torch package.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_ONNX_SOURCELOCATION_H
#define CUVIL_FRONTEND_ONNX_SOURCELOCATION_H

#include <string>
#include <string_view>

namespace cuvil {

/// "FILE:LINE (FUNCTION)" of the first frame of DocString outside the
/// torch package (the innermost frame if all are inside it); empty if
/// DocString holds no such stack.
std::string sourceLocation(std::string_view DocString);

} // namespace cuvil

#endif
