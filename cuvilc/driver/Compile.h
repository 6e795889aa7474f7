//===- Compile.h - ONNX model -> in-memory object and its facts -*- C++ -*-===//
//
// The compiling half of `cuvilc build`: every stage from the target file to
// the object, with nothing written to disk. `cuvilc build` writes what this
// returns; the host runner (runner/HostRunner.h) loads the object into a
// JIT instead. Library cuvil_compile: this and the stages Driver.h declares
// for every command (loadModel, loadModelBytes, planOptionsFor, usage
// errors), so that the runner can use them and the commands the runner.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_COMPILE_H
#define CUVIL_DRIVER_COMPILE_H

#include "codegen/ModelCodegen.h"
#include "driver/Driver.h"
#include "driver/Warnings.h"
#include "emit/HeaderWriter.h"
#include "ops/custom/CustomOp.h"
#include "target/RegionMap.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace cuvil {

/// One compiled model, in memory.
struct CompiledModel {
  /// The --custom-ops declarations the graph's nodes refer to: declared
  /// first so that they outlive the graph.
  std::unique_ptr<CustomOpSet> CustomOps;
  std::unique_ptr<Graph> G; ///< Optimised; the plan points into it.
  MemoryPlan Plan;
  TargetInfo Target;
  std::string Name;          ///< C prefix of the entry points.
  std::string WeightsRegion; ///< Where the embedded weights go.
  /// The firmware's names of the target's regions (--region-map,
  /// --regions-from); Target's regions are cut to the firmware's memory.
  RegionMap Regions;
  bool Embed = true; ///< Weights inside the object.
  /// The weight blob (also inside Code.Object when Embed).
  std::vector<uint8_t> Blob;
  CodegenResult Code;
  /// The kernel calls every node was lowered to (entry I: node I of G), as
  /// codegen compiled them: `cuvilc report` names each node's kernels.
  GraphLowering Lowering;
  /// What the C header needs, filled in from the stages above.
  HeaderInfo Header;
  /// What the build says without failing (driver/Warnings.h).
  std::vector<BuildWarning> Warnings;
};

/// Compiles the model Opts describes: usage checks (name, --emit, target,
/// regions, custom ops), import and passes, memory plan, weight blob and
/// code. The output paths of Opts are not used. With OnnxBytes the model
/// is read from these bytes of a .onnx file (--custom-ops is then not
/// supported) and Opts.Model only names it: the default C prefix and the
/// header's source comment come from it.
/// Timer, if given, times each stage.
llvm::Expected<CompiledModel>
compileModel(const BuildOptions &Opts, std::ostream &Log,
             std::optional<std::string_view> OnnxBytes = std::nullopt,
             StageTimer *Timer = nullptr);

} // namespace cuvil

#endif
