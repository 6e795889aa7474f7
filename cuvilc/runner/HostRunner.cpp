//===- HostRunner.cpp - Run a compiled model inside cuvilc ----------------===//
#include "runner/HostRunner.h"

#include "codegen/Backend.h"
#include "codegen/ModelCodegen.h"
#include "driver/Compile.h"
#include "ir/Diagnostic.h"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cuvil {

namespace {

/// The C prefix of every JIT-compiled model: each lives in a JIT of its
/// own, so the names never meet.
constexpr const char *JitModelName = "model";

/// What a status code means to someone running the model on the host.
const char *statusMeaning(int Status) {
  switch (Status) {
  case CUVIL_ERR_NULL: return "a required pointer is null";
  case CUVIL_ERR_ARENA_ALIGN: return "an arena is misaligned";
  case CUVIL_ERR_NO_WEIGHTS: return "the model has no weights";
  case CUVIL_ERR_NOT_INIT: return "run before a successful init";
  case CUVIL_ERR_ARENA_OVERLAP:
    return "arenas overlap each other or the weights";
  case CUVIL_ERR_ARENA_RANGE: return "an arena runs past the address space";
  case CUVIL_ERR_BOUNDS: return "a kernel wrote out of bounds";
  case CUVIL_ERR_DIM_RANGE:
    return "a bounded dimension is outside the range built for";
  case CUVIL_ERR_INDEX: return "no input or output of that number";
  case CUVIL_ERR_LOOP_BOUND:
    return "a loop would run past the bound it was built for (--loop-bound)";
  case CUVIL_ERR_BLOB_IDENT: return "the weights are not a cuvil weight blob";
  case CUVIL_ERR_BLOB_FORMAT: return "the weight blob is malformed";
  case CUVIL_ERR_BLOB_VERSION:
    return "the weight blob's version is unsupported";
  case CUVIL_ERR_BLOB_STRUCTURE:
    return "the weight blob was built for another model structure";
  case CUVIL_ERR_BLOB_ALIGN: return "the weight blob is misaligned";
  case CUVIL_ERR_BLOB_SIZE:
    return "the weight data is smaller than the code needs";
  case CUVIL_ERR_BLOB_CHECKSUM:
    return "the weight data is corrupted (CRC-32 differs)";
  case CUVIL_ERR_BLOB_SHORT:
    return "the weight blob is too short for the model";
  case CUVIL_ERR_BLOB_DIGEST:
    return "the weight data is corrupted (SHA-256 differs)";
  case CUVIL_ERR_BLOB_SIGNATURE:
    return "the weight blob is not signed with the given key";
  default: return "an unknown status";
  }
}

// The entry points are JIT-linked code without the type signature that
// clang's -fsanitize=function (in the sanitized build's UBSan) places before
// every function it compiles: its check of a call to them would read the
// 8 bytes before the entry point, the end of another function or memory
// before the code segment.
#if defined(__clang__)
#define CUVIL_CALLS_JIT_CODE __attribute__((no_sanitize("function")))
#else
#define CUVIL_CALLS_JIT_CODE
#endif

CUVIL_CALLS_JIT_CODE int callInit(llvm::orc::ExecutorAddr F, void *State,
                                  void *const *Arenas) {
  using InitFn = int (*)(void *, void *const *, const void *, unsigned long);
  // No weights given: the blob embedded in the object.
  return F.toPtr<InitFn>()(State, Arenas, nullptr, 0);
}

CUVIL_CALLS_JIT_CODE int callRunV(llvm::orc::ExecutorAddr F, void *State,
                                  const void *const *In, void *const *Out) {
  using RunVFn = int (*)(void *, const void *const *, void *const *);
  return F.toPtr<RunVFn>()(State, In, Out);
}

} // namespace

std::vector<RunnerTensor> runnerTensors(const std::vector<Value *> &Values,
                                        const std::vector<bool> &Optional) {
  std::vector<RunnerTensor> R;
  for (size_t I = 0; I < Values.size(); ++I) {
    const Value *V = Values[I];
    R.push_back({V->name(), V->dtype(), V->shape(),
                 static_cast<size_t>(V->byteSize()),
                 I < Optional.size() && Optional[I]});
  }
  return R;
}

std::string statusText(int Status) {
  const char *Name = nullptr;
  for (auto [N, V] : std::initializer_list<std::pair<const char *, int>>{
#define CUVIL_STATUS(Name, Value) {#Name, Value},
#include "StatusCodes.def"
       })
    if (V == Status)
      Name = N;
  return fmt::format("CUVIL_{} ({}): {}", Name ? Name : "?", Status,
                     statusMeaning(Status));
}

llvm::Error checkRunsOn(const TargetInfo &T, const std::string &HostTriple,
                        const llvm::StringMap<bool> &HostFeatures) {
  llvm::Triple TT(T.Triple), Host(HostTriple);
  if (TT.getArch() != Host.getArch() || !TT.isOSBinFormatELF() ||
      !Host.isOSBinFormatELF())
    return makeError("target '{}' ({}) cannot run on this machine ({})", T.Name,
                     T.Triple, HostTriple);
  if (HostFeatures.empty())
    return llvm::Error::success();
  auto TM = createTargetMachine(T);
  if (!TM)
    return TM.takeError();
  // Every feature T's CPU and features imply that the host reports as
  // absent. Features the host does not report at all are tuning flags
  // (slow-unaligned-mem...), not instructions.
  const llvm::MCSubtargetInfo *STI = (*TM)->getMCSubtargetInfo();
  std::vector<std::string> Missing;
  for (const llvm::SubtargetFeatureKV &KV : STI->getAllProcessorFeatures()) {
    auto It = HostFeatures.find(KV.Key);
    if (STI->getFeatureBits()[KV.Value] && It != HostFeatures.end() &&
        !It->second)
      Missing.push_back(KV.Key);
  }
  if (!Missing.empty())
    return makeError("target '{}' (CPU {}) needs CPU features this machine "
                     "lacks: {}",
                     T.Name, T.CPU, fmt::join(Missing, ", "));
  return llvm::Error::success();
}

void HostModel::AlignedFree::operator()(std::byte *P) const { std::free(P); }

HostModel::HostModel() = default;
HostModel::~HostModel() = default;

llvm::Expected<std::unique_ptr<HostModel>>
HostModel::compile(std::string_view OnnxBytes,
                   const std::map<std::string, int64_t> &Dims,
                   std::ostream &Log, const std::string &Target) {
  BuildOptions Opts;
  Opts.Target = Target;
  Opts.Dims = Dims;
  return compile(Opts, Log, OnnxBytes);
}

llvm::Expected<std::unique_ptr<HostModel>>
HostModel::compile(const BuildOptions &BuildOpts, std::ostream &Log,
                   std::optional<std::string_view> OnnxBytes) {
  // Refuse a target this machine cannot execute before compiling for it.
  auto T = loadTarget(BuildOpts.Target);
  if (!T)
    return T.takeError();
  if (auto E = checkRunsOn(*T, llvm::sys::getProcessTriple(),
                           llvm::sys::getHostCPUFeatures()))
    return E;

  BuildOptions Opts = BuildOpts;
  Opts.Name = JitModelName;
  Opts.InProcess = true;
  auto CM = compileModel(Opts, Log, OnnxBytes);
  if (!CM)
    return CM.takeError();

  std::unique_ptr<HostModel> M(new HostModel());
  M->Inputs = runnerTensors(CM->G->inputs(), CM->Header.InputsOptional);
  M->Outputs = runnerTensors(CM->G->outputs());
  M->Alignment = CM->Plan.Alignment;
  for (const ArenaPlan &A : CM->Plan.Arenas)
    M->ArenaSizes.push_back(A.Size);
  if (M->ArenaSizes.empty()) // the entry points still take one arena
    M->ArenaSizes.push_back(0);
  M->WeightBytes = CM->Blob.size();
  // cuvil_<name>_t in words (for its pointers' alignment).
  M->State.assign((CM->Code.ContextBytes + 7) / 8, 0);
  M->Profiled = BuildOpts.Profile;
  M->Steps = CM->Code.ProfileSteps;
  M->ProfileOffset = CM->Code.ProfileOffset;
  M->HasShapedOutputs = !CM->Header.ShapedOutputs.empty();
  if (auto E = M->load(CM->Code.Object, CM->Name))
    return E;
  return M;
}

int64_t HostModel::arenaBytes() const {
  int64_t Sum = 0;
  for (int64_t S : ArenaSizes)
    Sum += S;
  return Sum;
}

llvm::Error HostModel::load(const std::string &Object,
                            const std::string &Name) {
  static bool Initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)Initialized;
  auto J = llvm::orc::LLJITBuilder()
               .setLinkProcessSymbolsByDefault(false)
               .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
               .create();
  if (!J)
    return J.takeError();
  JIT = std::move(*J);
  // The one C library function generated code calls: the clock of a
  // --profile build.
  llvm::orc::SymbolMap Libc;
  Libc[JIT->mangleAndIntern("clock_gettime")] = {
      llvm::orc::ExecutorAddr::fromPtr(&clock_gettime),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  if (auto E = JIT->getMainJITDylib().define(
          llvm::orc::absoluteSymbols(std::move(Libc))))
    return E;
  if (auto E = JIT->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(Object, "cuvil_" + Name + ".o")))
    return E;
  auto Init = JIT->lookup("cuvil_" + Name + "_init");
  if (!Init)
    return Init.takeError();
  auto Run = JIT->lookup("cuvil_" + Name + "_run_v");
  if (!Run)
    return Run.takeError();
  RunV = *Run;
  if (HasShapedOutputs) {
    auto Shape = JIT->lookup("cuvil_" + Name + "_output_shape");
    if (!Shape)
      return Shape.takeError();
    OutputShape = *Shape;
  }

  // The arenas: the plan's sizes at its alignment (one alignment unit for
  // an empty one, so that every pointer is distinct and valid).
  std::vector<void *> ArenaPtrs;
  for (int64_t Size : ArenaSizes) {
    size_t Bytes = static_cast<size_t>(std::max(Size, Alignment));
    Bytes = (Bytes + Alignment - 1) / Alignment * Alignment;
    auto *P = static_cast<std::byte *>(
        std::aligned_alloc(static_cast<size_t>(Alignment), Bytes));
    if (!P)
      return makeError("cannot allocate an arena of {} bytes", Bytes);
    Arenas.emplace_back(P);
    ArenaPtrs.push_back(P);
  }
  int Status = callInit(*Init, State.data(), ArenaPtrs.data());
  if (Status != CUVIL_OK)
    return makeError("cuvil_{}_init failed: {}", Name, statusText(Status));
  return llvm::Error::success();
}

std::vector<int64_t> HostModel::outputShape(size_t I) const {
  if (!OutputShape)
    return Outputs[I].Shape;
  using ShapeFn = int (*)(const void *, unsigned, int64_t *);
  std::vector<int64_t> S(Outputs[I].Shape.size() + 8);
  int Rank = OutputShape.toPtr<ShapeFn>()(State.data(),
                                          static_cast<unsigned>(I), S.data());
  if (Rank < 0 || static_cast<size_t>(Rank) > S.size())
    return Outputs[I].Shape;
  S.resize(static_cast<size_t>(Rank));
  return S;
}

std::string HostModel::profileTable() const {
  if (!Profiled)
    return "";
  return std::string(reinterpret_cast<const char *>(State.data()) +
                         ProfileOffset,
                     profileTableBytes(Steps.size()));
}

llvm::Error HostModel::run(const std::vector<const void *> &In,
                           const std::vector<void *> &Out) {
  if (In.size() != Inputs.size() || Out.size() != Outputs.size())
    return makeError("the model takes {} inputs and {} outputs, not {} and {}",
                     Inputs.size(), Outputs.size(), In.size(), Out.size());
  for (size_t I = 0; I < In.size(); ++I)
    if (!In[I] && Inputs[I].Bytes && !Inputs[I].Optional)
      return makeError("input {} ('{}') is null, and only an optional input "
                       "may be left out",
                       I, Inputs[I].Name);
  for (size_t I = 0; I < Out.size(); ++I)
    if (!Out[I] && Outputs[I].Bytes)
      return makeError("output {} ('{}') is null", I, Outputs[I].Name);
  int Status = callRunV(RunV, State.data(), In.data(), Out.data());
  if (Status != CUVIL_OK)
    return makeError("cuvil_{}_run_v failed: {}", JitModelName,
                     statusText(Status));
  return llvm::Error::success();
}

} // namespace cuvil
