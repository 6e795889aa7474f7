//===- OrtReference.cpp ---------------------------------------------------===//
#include "runner/OrtReference.h"

#include "ir/Diagnostic.h"
#include "runner/Process.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace cuvil {

llvm::Expected<std::vector<std::string>>
ortOutputs(const std::string &OnnxBytes, const std::vector<RunnerTensor> &Ins,
           const std::vector<std::string> &InData,
           const std::vector<RunnerTensor> &Outs, const std::string &KeepWork,
           std::ostream &Log) {
  // The input types run_ort.js feeds (by their names in its manifest).
  auto OrtType = [](DType T) -> const char * {
    switch (T) {
    case DType::F32: return "float32";
    case DType::I64: return "int64";
    case DType::I32: return "int32";
    case DType::I8: return "int8";
    case DType::U8: return "uint8";
    case DType::Bool: return "bool";
    default: return nullptr;
    }
  };
  for (const RunnerTensor &T : Ins)
    if (!OrtType(T.Ty))
      return makeError("--compare-ort: input '{}' is {}; ONNX Runtime's "
                       "reference script feeds float32, int64, int32, int8, "
                       "uint8 and bool tensors only (compare with --compare "
                       "REF.npy instead)",
                       T.Name, dtypeName(T.Ty));
  for (const RunnerTensor &T : Outs)
    if (T.Ty != DType::F32)
      return makeError("--compare-ort: output '{}' is {}; ONNX Runtime's "
                       "reference script reads float32 outputs only "
                       "(compare with --compare REF.npy instead)",
                       T.Name, dtypeName(T.Ty));
  auto Script = homeFile("tests/reference/run_ort.js");
  if (!Script)
    return makeError("--compare-ort needs cuvil's source tree: {}",
                     llvm::toString(Script.takeError()));
  if (auto Ort = homeFile("tests/reference/node_modules/onnxruntime-node");
      !Ort)
    return makeError("--compare-ort: ONNX Runtime is not installed ({}); "
                     "scripts/install-deps.sh installs it",
                     llvm::toString(Ort.takeError()));

  WorkDir W(Log);
  if (auto E = W.create(KeepWork, "cuvil-ort"))
    return E;
  const std::string &Dir = W.path();
  nlohmann::ordered_json Manifest;
  Manifest["inputs"] = nlohmann::ordered_json::array();
  for (size_t I = 0; I < Ins.size(); ++I) {
    Manifest["inputs"].push_back({{"name", Ins[I].Name},
                                  {"shape", Ins[I].Shape},
                                  {"dtype", OrtType(Ins[I].Ty)}});
    if (auto E = writeFile(fmt::format("{}/input_{}.bin", Dir, I), InData[I]))
      return E;
  }
  Manifest["outputs"] = nlohmann::ordered_json::array();
  for (const RunnerTensor &T : Outs)
    Manifest["outputs"].push_back(T.Name);
  if (auto E = writeFile(Dir + "/manifest.json", Manifest.dump(1) + "\n"))
    return E;
  if (auto E = writeFile(Dir + "/model.onnx", OnnxBytes))
    return E;

  Log << "cuvilc run: running ONNX Runtime (" << *Script << ")\n";
  if (auto R = runTool({"node", *Script, Dir}, "onnxruntime", Dir); !R)
    return R.takeError();
  std::vector<std::string> Refs;
  for (size_t I = 0; I < Outs.size(); ++I) {
    auto Data = readOutputFile(fmt::format("{}/ref_{}.bin", Dir, I),
                               "ONNX Runtime", I, Outs[I].Bytes);
    if (!Data)
      return Data.takeError();
    Refs.push_back(std::move(*Data));
  }
  return Refs;
}

} // namespace cuvil
