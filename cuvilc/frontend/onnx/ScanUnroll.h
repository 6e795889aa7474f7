//===- ScanUnroll.h - Scan as straight-line ONNX nodes ----------*- C++ -*-===//
#ifndef CUVIL_FRONTEND_ONNX_SCANUNROLL_H
#define CUVIL_FRONTEND_ONNX_SCANUNROLL_H

#include <map>
#include <onnx/onnx_pb.h>
#include <string>

namespace cuvil {

/// Rewrites every Scan of M's main graph whose trip count shape inference
/// determined into unrolled plain nodes (see ScanUnroll.cpp); returns
/// whether anything changed (then shape inference must run again). Why
/// each other Scan stays goes to Declined, by its first output's name.
bool unrollScans(onnx::ModelProto &M,
                 std::map<std::string, std::string> &Declined);

} // namespace cuvil

#endif
