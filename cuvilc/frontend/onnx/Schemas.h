//===- Schemas.h - cuvil's ONNX schemas for opsets 18 to 21 -----*- C++ -*-===//
//
// Debian's ONNX 1.12 knows opsets up to 17. For the operators whose
// signature changed in opsets 18 to 21 (Reduce* and Split taking axes and
// sizes differently, Pad's axes, Resize's new attributes, the pools'
// dilations and ceil_mode, Cast's saturate, blocked quantization, DFT's
// axis input) and for
// the new operators cuvil compiles (GroupNormalization, Col2Im, Gelu,
// Mish), cuvil registers its own schema, each with a type-and-shape
// inference function, so that the ONNX checker and shape inference work on
// the whole model. Operators that opsets 19 and 21 only re-versioned for
// wider element types keep ONNX 1.12's schema: a lookup returns the latest
// schema at or below the model's opset, cuvil's where both have that
// version (Einsum-12, whose ONNX 1.12 inference gives the output rank only).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_ONNX_SCHEMAS_H
#define CUVIL_FRONTEND_ONNX_SCHEMAS_H

#include <vector>

namespace onnx {
class ISchemaRegistry;
class OpSchema;
} // namespace onnx

namespace cuvil {

/// ONNX's own schemas, overlaid with cuvil's for opsets 18 to 21. Built on
/// first use; immutable and safe to share afterwards.
const onnx::ISchemaRegistry &schemaRegistry();

/// cuvil's schemas (SchemasNewer.cpp), not yet finalized.
std::vector<onnx::OpSchema> newerSchemas();

} // namespace cuvil

#endif
