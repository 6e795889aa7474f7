//===- GraphCheck.h - Precise messages before the ONNX checker --*- C++ -*-===//
#ifndef CUVIL_FRONTEND_ONNX_GRAPHCHECK_H
#define CUVIL_FRONTEND_ONNX_GRAPHCHECK_H

#include <llvm/Support/Error.h>
#include <onnx/onnx_pb.h>

namespace onnx {
class ISchemaRegistry;
} // namespace onnx

namespace cuvil {

/// Names what the ONNX checker would only call "not topologically sorted":
/// every node input that no initializer, graph input or node defines (with
/// node and input name), names produced twice, a cycle (its nodes and the
/// tensors that link them), and nodes out of order. Iterative throughout.
llvm::Error checkGraphStructure(const onnx::GraphProto &G);

/// Graph outputs written without a shape (newer exporters give only the
/// element type) get the one ONNX shape inference finds; value_info entries
/// without a shape are dropped. A graph input without a shape, or an output
/// inference cannot type, is an error saying how to fix the model.
/// Registry: the schemas to infer with (cuvil's, which know opsets 18-21).
llvm::Error fillMissingShapes(onnx::ModelProto &M,
                              const onnx::ISchemaRegistry *Registry);

/// ONNX 1.12's shape inference for some operators indexes an input's
/// dimensions without checking its rank, and crashes (SIGSEGV in libonnx)
/// on a model whose input is shorter. Where the ranks are known before
/// inference (graph inputs, initializers, declared value_info), check them
/// first. Found by tests/fuzz/fuzz_onnx. Likewise Scan's num_scan_inputs,
/// which sizes the vectors ONNX's inference allocates.
llvm::Error checkRanksOnnxInferenceAssumes(const onnx::GraphProto &G);

} // namespace cuvil

#endif
