//===- Opsets.cpp - Version checks of an ONNX model ----------------------===//
#include "frontend/onnx/Opsets.h"

#include "frontend/onnx/OnnxWalk.h"
#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <unordered_set>

namespace cuvil {
namespace {

std::string canonicalDomain(const std::string &D) {
  return D == "ai.onnx" ? "" : D;
}

const OpsetRange *rangeOf(const std::string &Domain) {
  for (const OpsetRange &R : SupportedOpsets)
    if (Domain == R.Domain)
      return &R;
  return nullptr;
}

std::string domainLabel(const std::string &Domain) {
  if (const OpsetRange *R = rangeOf(Domain))
    return R->Label;
  return "domain '" + Domain + "'";
}

/// The node's name as the importer gives it (op_index when unnamed).
std::string nodeLabel(const onnx::NodeProto &NP, int Index) {
  return NP.name().empty() ? NP.op_type() + "_" + std::to_string(Index)
                           : NP.name();
}

} // namespace

llvm::Error checkVersions(const onnx::ModelProto &M) {
  int64_t IR = M.ir_version();
  if (IR < MinIrVersion || IR > MaxIrVersion)
    return makeError("the model has IR version {}; cuvil reads IR versions "
                     "{} to {}",
                     IR, MinIrVersion, MaxIrVersion);
  std::map<std::string, int64_t> Seen;
  for (const auto &O : M.opset_import()) {
    std::string D = canonicalDomain(O.domain());
    auto [It, New] = Seen.emplace(D, O.version());
    if (!New)
      return makeError("the model imports {} twice (opsets {} and {})",
                       domainLabel(D), It->second, O.version());
    const OpsetRange *R = rangeOf(D);
    if (!R)
      continue; // a custom domain: its nodes are reported by name
    if (O.version() < R->Min || O.version() > R->Max)
      return makeError("the model imports opset {} of {}; cuvil supports "
                       "opsets {} to {}",
                       O.version(), R->Label, R->Min, R->Max);
  }
  // IR versions before 3 have no opset_import: they mean opset 1.
  llvm::Error All = llvm::Error::success();
  std::unordered_set<std::string> Reported;
  forEachOnnxNode(M.graph(), [&](const onnx::NodeProto &NP, int Index) {
    std::string D = canonicalDomain(NP.domain());
    if (IR < 3 || Seen.count(D) || !Reported.insert(D).second)
      return;
    All = llvm::joinErrors(
        std::move(All),
        makeError("node '{}' ({}) belongs to {}, which the model does not "
                  "import (its opset_import has no entry for it)",
                  nodeLabel(NP, Index), NP.op_type(), domainLabel(D)));
  });
  return All;
}

llvm::Error checkKnownOps(const onnx::ModelProto &M,
                          const onnx::ISchemaRegistry &Registry) {
  int64_t Version = M.ir_version() < 3 ? 1 : 0;
  for (const auto &O : M.opset_import())
    if (canonicalDomain(O.domain()).empty())
      Version = O.version();
  llvm::Error All = llvm::Error::success();
  forEachOnnxNode(M.graph(), [&](const onnx::NodeProto &NP, int Index) {
    if (!canonicalDomain(NP.domain()).empty() ||
        Registry.GetSchema(NP.op_type(), static_cast<int>(Version), ""))
      return;
    // cuvil compiles it, but not at this opset (Gelu before 20).
    std::string Why =
        lookupOp(NP.op_type())
            ? fmt::format("operator '{}' does not exist at opset {} of the "
                          "default ONNX domain",
                          NP.op_type(), Version)
            : fmt::format("operator '{}' is not supported by cuvil (opset {} "
                          "of the default ONNX domain)",
                          NP.op_type(), Version);
    All = llvm::joinErrors(std::move(All),
                           makeError("node '{}' ({}): {}", nodeLabel(NP, Index),
                                     NP.op_type(), Why));
  });
  return All;
}

void checkModel(const onnx::ModelProto &M,
                const onnx::ISchemaRegistry &Registry) {
  // What onnx::checker::check_model does above check_graph, with cuvil's IR
  // version range (checkVersions has checked it) and schema registry.
  if (M.metadata_props_size() > 1) {
    std::unordered_set<std::string> Keys;
    for (const auto &E : M.metadata_props())
      if (!Keys.insert(E.key()).second)
        fail_check("the model has duplicate keys in metadata_props ('", E.key(),
                   "')");
  }
  onnx::checker::CheckerContext Ctx;
  Ctx.set_ir_version(static_cast<int>(M.ir_version()));
  Ctx.set_schema_registry(&Registry);
  std::unordered_map<std::string, int> Imports;
  for (const auto &O : M.opset_import())
    Imports[O.domain()] = static_cast<int>(O.version());
  if (M.ir_version() < 3) {
    if (!Imports.empty())
      fail_check("a model of IR version < 3 cannot have opset_import");
    Imports[""] = 1;
  } else if (Imports.empty()) {
    fail_check("a model of IR version >= 3 must have opset_import");
  }
  Ctx.set_opset_imports(Imports);
  onnx::checker::LexicalScopeContext Lex;
  onnx::checker::check_graph(M.graph(), Ctx, Lex);
  if (M.ir_version() >= 8)
    onnx::checker::check_model_local_functions(M, Ctx, Lex);
}

} // namespace cuvil
