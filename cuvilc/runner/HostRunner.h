//===- HostRunner.h - Run a compiled model inside cuvilc --------*- C++ -*-===//
//
// Some commands need the model's outputs on sample data at compile time
// (`cuvilc quantize` calibrates on the float model and checks the INT8 one).
// HostModel runs them through cuvil's own code, with nothing outside the
// process: the model is compiled exactly as `cuvilc build` would compile it
// for a target the build machine can execute (compileModel), and the object
// is linked in memory by an ORC LLJIT of the model's own.
//
// The object is linked against nothing but itself (no process symbols, no
// platform runtime): the generated code is freestanding, so a symbol it
// does not define is an error at load time rather than a silent call into
// the host's C library.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNNER_HOSTRUNNER_H
#define CUVIL_RUNNER_HOSTRUNNER_H

#include "codegen/ProfileCode.h"
#include "driver/Driver.h"
#include "ir/DType.h"
#include "target/TargetInfo.h"

#include <cstddef>
#include <cstdint>
#include <llvm/ADT/StringMap.h>
#include <llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h>
#include <llvm/Support/Error.h>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace cuvil {

/// A graph input or output of a HostModel: dense, row-major, little-endian.
struct RunnerTensor {
  std::string Name;
  DType Ty = DType::F32;
  std::vector<int64_t> Shape;
  size_t Bytes = 0; ///< Of the whole tensor.
  /// An input the caller may leave out (NULL): an ONNX optional input the
  /// model tests (ops/sequence/Optional.h).
  bool Optional = false;
};

class Value;

/// The descriptions of graph inputs or outputs; Optional (inputs): which
/// the caller may leave out (HeaderInfo::InputsOptional).
std::vector<RunnerTensor> runnerTensors(const std::vector<Value *> &Values,
                                        const std::vector<bool> &Optional = {});

/// One model compiled for the build machine and loaded into this process.
/// Each instance has its own JIT, arenas and state, so several may be alive
/// at once; one instance runs one inference at a time (run() uses its
/// arenas), as often as wanted.
class HostModel {
public:
  /// Compiles the .onnx bytes for Target (default "host", the build
  /// machine's x86-64 AVX2 target; any target whose code this machine can
  /// execute will do) with Dims for the symbolic input dimensions, loads
  /// the object and initialises it with its embedded weights. Errors: the
  /// model's (as from `cuvilc build`), a target this machine cannot run
  /// (other architecture, or CPU features it lacks: refused before any
  /// code runs, not a SIGILL), and failures to link or initialise.
  /// Log receives what `cuvilc build` would print (nothing by default).
  static llvm::Expected<std::unique_ptr<HostModel>>
  compile(std::string_view OnnxBytes,
          const std::map<std::string, int64_t> &Dims, std::ostream &Log,
          const std::string &Target = "host");
  /// The same for a model compiled exactly as `cuvilc build` compiles it
  /// with Opts (target, dims, --kernels, --checked...): `cuvilc run`. The
  /// model is read from OnnxBytes if given, else from Opts.Model; Opts.Name
  /// and the output paths are not used.
  static llvm::Expected<std::unique_ptr<HostModel>>
  compile(const BuildOptions &Opts, std::ostream &Log,
          std::optional<std::string_view> OnnxBytes = std::nullopt);

  const std::vector<RunnerTensor> &inputs() const { return Inputs; }
  const std::vector<RunnerTensor> &outputs() const { return Outputs; }
  /// Bytes of the memory plan's arenas, all together.
  int64_t arenaBytes() const;
  /// Bytes of the weight blob embedded in the object.
  size_t weightBytes() const { return WeightBytes; }

  /// One inference: In[i] points at inputs()[i].Bytes bytes, Out[i]
  /// receives outputs()[i].Bytes bytes; In[i] may be null for an input
  /// the caller leaves out (inputs()[i].Optional). Outputs must not overlap
  /// the inputs. Errors: wrong counts, a null buffer, or a status code of the
  /// generated code (named, with its meaning).
  llvm::Error run(const std::vector<const void *> &In,
                  const std::vector<void *> &Out);

  /// Output I's shape as the last run wrote it: outputs()[I].Shape, or for
  /// an output whose shape the branch of an If picks (HeaderInfo::
  /// ShapedOutputs), that branch's (cuvil_<name>_output_shape). Its bytes
  /// are the first of the output's buffer.
  std::vector<int64_t> outputShape(size_t I) const;

  /// A --profile build: its steps, and the bytes of its table (runs, then
  /// the rows) as the runs so far left them. Not profiled: no steps, and
  /// an empty table.
  const std::vector<ProfileStep> &profileSteps() const { return Steps; }
  std::string profileTable() const;

  ~HostModel();
  HostModel(const HostModel &) = delete;
  HostModel &operator=(const HostModel &) = delete;

private:
  HostModel();
  llvm::Error load(const std::string &Object, const std::string &Name);

  struct AlignedFree {
    void operator()(std::byte *P) const;
  };
  std::unique_ptr<llvm::orc::LLJIT> JIT;
  std::vector<RunnerTensor> Inputs, Outputs;
  int64_t Alignment = 64;
  std::vector<int64_t> ArenaSizes; ///< One per arena of the plan (at least 1).
  size_t WeightBytes = 0;
  std::vector<std::unique_ptr<std::byte, AlignedFree>> Arenas;
  /// Storage for the generated cuvil_<name>_t (weights pointer, state
  /// word, one pointer per arena, the --checked step): words, so aligned
  /// for its pointers.
  std::vector<uint64_t> State;
  /// --profile: the table's rows, and the byte offset of profile_runs in
  /// State.
  bool Profiled = false;
  bool HasShapedOutputs = false;
  std::vector<ProfileStep> Steps;
  uint64_t ProfileOffset = 0;
  /// cuvil_<name>_run_v in the JIT, and cuvil_<name>_output_shape when
  /// some output's shape depends on a branch (else null).
  llvm::orc::ExecutorAddr RunV, OutputShape;
};

/// Whether code for T can run on a machine of triple HostTriple whose CPU
/// has HostFeatures (LLVM feature names, as llvm::sys::getHostCPUFeatures
/// reports them): an error naming the other architecture, or the features
/// T's CPU implies and the host lacks. An empty HostFeatures (detection
/// failed) checks the architecture only.
llvm::Error checkRunsOn(const TargetInfo &T, const std::string &HostTriple,
                        const llvm::StringMap<bool> &HostFeatures);

/// The text of a status code of the generated entry points: its name in
/// cuvil/status.h and what it means.
std::string statusText(int Status);

} // namespace cuvil

#endif
