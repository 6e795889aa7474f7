//===- Opsets.h - The ONNX versions cuvil reads -----------------*- C++ -*-===//
//
// The one place that says which ONNX IR versions and operator-set versions
// cuvil accepts. Debian's ONNX 1.12 knows opsets up to 17; cuvil adds its
// own schemas for what changed in opsets 18 to 21 (see Schemas.h), so its
// range is wider than the bundled checker's. The importer checks a model
// against this table before anything else reads it, and runs the ONNX
// checker with cuvil's schema registry (the bundled check_model would
// refuse IR versions above 8 and miss every schema past opset 17).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_ONNX_OPSETS_H
#define CUVIL_FRONTEND_ONNX_OPSETS_H

#include <llvm/Support/Error.h>

#include <cstdint>

namespace onnx {
class ModelProto;
class ISchemaRegistry;
} // namespace onnx

namespace cuvil {

/// Operator-set versions of one domain that cuvil accepts.
struct OpsetRange {
  const char *Domain; ///< "" is the default ONNX domain (alias "ai.onnx").
  const char *Label;  ///< How messages name the domain.
  int64_t Min, Max;
};

/// The default ONNX domain: opsets 1 to 21. ai.onnx.ml: opsets 1 to 5 are
/// read (its operators are not compiled: a node of it is reported as
/// unsupported). Other domains are not versioned here: a node of one is
/// reported with its domain's name.
inline constexpr OpsetRange SupportedOpsets[] = {
    {"", "the default ONNX domain", 1, 21},
    {"ai.onnx.ml", "domain 'ai.onnx.ml'", 1, 5},
};
inline constexpr const OpsetRange &DefaultOpsets = SupportedOpsets[0];

/// ONNX IR versions cuvil reads (IR 10 is what ONNX writes with opset 21).
inline constexpr int64_t MinIrVersion = 1, MaxIrVersion = 10;

/// The model's IR version and opset imports are in the supported ranges,
/// each domain is imported once and every node's domain is imported.
llvm::Error checkVersions(const onnx::ModelProto &M);

/// Nodes of the default domain that no schema of Registry knows at the
/// model's opset: one error per node ("operator 'X' is not supported by
/// cuvil", or "does not exist at opset N" for an op cuvil compiles at other
/// opsets), before the ONNX checker gives its less helpful "No Op
/// registered".
llvm::Error checkKnownOps(const onnx::ModelProto &M,
                          const onnx::ISchemaRegistry &Registry);

/// The ONNX checker's model-level checks (as onnx::checker::check_model,
/// but with cuvil's IR range and Registry's schemas). Throws ONNX's
/// ValidationError like the checker.
void checkModel(const onnx::ModelProto &M,
                const onnx::ISchemaRegistry &Registry);

} // namespace cuvil

#endif
