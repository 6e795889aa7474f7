//===- ScanUnroll.h - Scan as straight-line ONNX nodes ----------*- C++ -*-===//
#ifndef CUVIL_FRONTEND_ONNX_SCANUNROLL_H
#define CUVIL_FRONTEND_ONNX_SCANUNROLL_H

#include <onnx/onnx_pb.h>

namespace cuvil {

/// Rewrites every Scan of M's main graph whose trip count shape inference
/// determined into unrolled plain nodes (see ScanUnroll.cpp); returns
/// whether anything changed (then shape inference must run again).
bool unrollScans(onnx::ModelProto &M);

} // namespace cuvil

#endif
