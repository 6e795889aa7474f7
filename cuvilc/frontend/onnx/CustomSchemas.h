//===- CustomSchemas.h - ONNX schemas of user-declared ops ------*- C++ -*-===//
//
// ONNX knows nothing of an op the user declared with --custom-ops: for the
// checker and for shape inference (which must see through it to type the
// standard ops after it), each declaration becomes an ONNX OpSchema whose
// type-and-shape inference applies the declared dtype and shape rules.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_ONNX_CUSTOMSCHEMAS_H
#define CUVIL_FRONTEND_ONNX_CUSTOMSCHEMAS_H

#include <memory>

namespace onnx {
class ISchemaRegistry;
} // namespace onnx

namespace cuvil {

class RuntimeOps;

/// Base overlaid with a schema per op of Ops (which must outlive it).
std::unique_ptr<onnx::ISchemaRegistry>
customSchemaRegistry(const onnx::ISchemaRegistry &Base, const RuntimeOps &Ops);

} // namespace cuvil

#endif
