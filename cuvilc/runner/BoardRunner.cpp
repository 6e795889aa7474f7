//===- BoardRunner.cpp - Run a compiled model on a board under QEMU -------===//
#include "runner/BoardRunner.h"

#include "driver/Compile.h"
#include "emit/HeaderWriter.h"
#include "emit/LinkerScript.h"
#include "ir/CacheRoot.h"
#include "ir/Diagnostic.h"
#include "runner/Process.h"
#include "runner/RuntimeCache.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/StringSaver.h>
#include <llvm/Support/raw_ostream.h>
#include <regex>

namespace cuvil {

namespace {

/// The runner's buffer alignment and default I/O pool (runner.c's
/// IO_ALIGN and CUVIL_RUNNER_IO_POOL_BYTES).
constexpr uint64_t RunnerIoAlign = 64;
constexpr uint64_t RunnerIoPoolDefault = 1u << 20;

/// The words of a command line in a target file (quotes as a shell takes
/// them).
std::vector<std::string> splitCommand(const std::string &Line) {
  llvm::BumpPtrAllocator A;
  llvm::StringSaver Saver(A);
  llvm::SmallVector<const char *> Words;
  llvm::cl::TokenizeGNUCommandLine(Line, Saver, Words);
  return std::vector<std::string>(Words.begin(), Words.end());
}

uint64_t alignUp(uint64_t N) {
  return (N + RunnerIoAlign - 1) / RunnerIoAlign * RunnerIoAlign;
}

} // namespace

llvm::Expected<BoardRunResult>
runFirmware(const CompiledModel &CM, const std::vector<std::string> &Inputs,
            const BoardRunOptions &O, std::ostream &Log) {
  const TargetInfo &T = CM.Target;
  auto RuntimeMk = homeFile("runtime-baremetal/runtime.mk");
  if (!RuntimeMk)
    return RuntimeMk.takeError();
  auto Runner = homeFile("runtime-baremetal/runner/runner.c");
  if (!Runner)
    return Runner.takeError();
  auto BaseScript = homeFile("linker-scripts/" + T.BaseLinkerScript);
  if (!BaseScript)
    return BaseScript.takeError();
  std::vector<std::string> Qemu = splitCommand(T.QemuCommand);
  if (Qemu.empty())
    return makeError("target '{}': its [qemu] command is empty", T.Name);
  // Every tool, before anything is built: a missing one is said first.
  std::vector<std::string> Tools = {"make", O.CC, Qemu[0]};
  llvm::StringRef CCName = llvm::sys::path::filename(O.CC);
  if (CCName.starts_with("clang")) // runtime.mk's archiver for clang-N
    Tools.push_back(("llvm-ar" + CCName.drop_front(5)).str());
  std::string CCPath;
  for (const std::string &Tool : Tools) {
    auto P = findTool(Tool);
    if (!P)
      return P.takeError();
    if (Tool == O.CC)
      CCPath = *P;
  }

  WorkDir W(Log);
  if (auto E = W.create(O.KeepWork, "cuvil-run"))
    return E;
  const std::string &Dir = W.path();

  // The model as `cuvilc build --name model` writes it, and its inputs.
  std::vector<std::pair<std::string, std::string>> Files = {
      {"model.o", CM.Code.Object},
      {"model.h", writeHeader(*CM.G, CM.Plan, CM.Target, CM.Header)},
      {"model.ld", writeLinkerScript(CM.Name, CM.Plan, CM.Target,
                                     CM.WeightsRegion, CM.Embed)},
      {"cuvil-models.ld", "INCLUDE model.ld\n"}};
  uint64_t Pool = 0;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    Files.push_back({fmt::format("input_{}.bin", I), Inputs[I]});
    Pool += alignUp(Inputs[I].size());
  }
  std::vector<uint64_t> OutBytes;
  for (const Value *V : CM.G->outputs()) {
    OutBytes.push_back(static_cast<uint64_t>(V->byteSize()));
    Pool += alignUp(OutBytes.back());
  }
  Pool = std::max(Pool, RunnerIoPoolDefault);
  for (const auto &[Name, Bytes] : Files)
    if (auto E = writeFile(fmt::format("{}/{}", Dir, Name), Bytes))
      return E;

  // The runtime library and the flags runtime.mk gives a firmware, built
  // in the cache (RuntimeCache.h) when there is one, under its lock; the
  // firmware links a copy in the work directory's runtime/.
  std::vector<std::string> Make = {"make",
                                   "--no-print-directory",
                                   "-f",
                                   *RuntimeMk,
                                   "CUVIL_TARGET=" + T.Name,
                                   "CUVIL_RT_BOOT=" + T.Boot,
                                   "CUVIL_RT_ARCH=" + T.ClangFlags,
                                   "CUVIL_RT_TRIPLE=" + T.Triple,
                                   "CC=" + O.CC,
                                   "CUVIL_LINKER_SCRIPT=" + *BaseScript};
  const std::string RtDir = Dir + "/runtime";
  std::string BuildDir = RtDir;
  RuntimeCacheLock Lock;
  if (std::optional<std::string> Root = cacheRoot()) {
    std::string Cached = runtimeCacheDir(*Root, T.Name, Make, CCPath);
    if (auto E = Lock.acquire(Cached))
      Log << "cuvilc run: no runtime cache (" << llvm::toString(std::move(E))
          << "): the runtime is built in the work directory\n";
    else
      BuildDir = Cached;
  }
  Make.push_back("CUVIL_RT_BUILD=" + BuildDir);
  const char *Names[] = {"CUVIL_RT_LIB", "CUVIL_RT_CFLAGS", "CUVIL_RT_LDFLAGS",
                         "CUVIL_RT_LDLIBS"};
  std::vector<std::string> Query = Make;
  Query.insert(Query.end(),
               {"-s", "--eval", "cuvil-run-print-%: ; @echo '$($*)'"});
  for (const char *N : Names)
    Query.push_back(std::string("cuvil-run-print-") + N);
  Log << "cuvilc run: the " << T.Name << " runtime, built in " << BuildDir
      << " (make rebuilds what changed)\n";
  auto Values = runTool(Query, "runtime-flags", Dir);
  if (!Values)
    return Values.takeError();
  llvm::SmallVector<llvm::StringRef> Lines;
  llvm::StringRef(*Values).split(Lines, '\n', -1, /*KeepEmpty=*/true);
  if (Lines.size() < std::size(Names))
    return makeError("runtime.mk printed {} lines for its {} variables",
                     Lines.size(), std::size(Names));
  std::vector<std::vector<std::string>> Rt;
  for (size_t I = 0; I < std::size(Names); ++I)
    Rt.push_back(splitCommand(Lines[I].str()));
  if (Rt[0].size() != 1)
    return makeError("runtime.mk's CUVIL_RT_LIB is not one file: '{}'",
                     Lines[0].str());
  std::vector<std::string> BuildLib = Make;
  BuildLib.insert(BuildLib.end(), Rt[0].begin(), Rt[0].end());
  if (auto R = runTool(BuildLib, "runtime", Dir); !R)
    return R.takeError();
  if (BuildDir != RtDir) {
    const std::string Copy = RtDir + "/libcuvil-rt.a";
    if (std::error_code EC = llvm::sys::fs::create_directories(RtDir))
      return makeError("'{}': cannot create it: {}", RtDir, EC.message());
    if (std::error_code EC = llvm::sys::fs::copy_file(Rt[0][0], Copy))
      return makeError("'{}': cannot copy it to '{}': {}", Rt[0][0], Copy,
                       EC.message());
    for (std::vector<std::string> &Flags : Rt)
      for (std::string &Word : Flags)
        if (size_t At = Word.find(BuildDir); At != std::string::npos)
          Word.replace(At, BuildDir.size(), RtDir);
  }
  Lock.release(); // other runs may rebuild the cached library from here on

  // The runner, linked with the model into image.elf.
  std::vector<std::string> Compile = {O.CC};
  Compile.insert(Compile.end(), Rt[1].begin(), Rt[1].end());
  Compile.insert(Compile.end(),
                 {"-O2", fmt::format("-DCUVIL_RUNNER_IO_POOL_BYTES={}", Pool),
                  "-I", Dir, "-c", *Runner, "-o", Dir + "/runner.o"});
  if (auto R = runTool(Compile, "compile-runner", Dir); !R)
    return R.takeError();
  std::vector<std::string> Link = {O.CC};
  Link.insert(Link.end(), Rt[2].begin(), Rt[2].end());
  // The base script INCLUDEs cuvil-models.ld, found on the search path.
  Link.insert(Link.end(), {"-L", Dir, Dir + "/runner.o", Dir + "/model.o"});
  Link.insert(Link.end(), Rt[3].begin(), Rt[3].end());
  Link.insert(Link.end(), {"-o", Dir + "/image.elf"});
  if (auto R = runTool(Link, "link", Dir); !R)
    return R.takeError();

  // Boot it; semihosting reads and writes the files in the work directory
  // (where a kept one may still hold the outputs of an earlier run).
  std::vector<std::string> Old = {Dir + "/profile.bin"};
  for (size_t I = 0; I < OutBytes.size(); ++I)
    Old.push_back(fmt::format("{}/out_{}.bin", Dir, I));
  for (const std::string &F : Old)
    if (std::error_code EC = llvm::sys::fs::remove(F))
      return makeError("'{}': cannot remove it: {}", F, EC.message());
  std::vector<std::string> Boot = Qemu;
  Boot.insert(Boot.end(), {"-icount", "shift=0", "-kernel", "image.elf"});
  Log << "cuvilc run: booting " << Qemu[0] << "\n";
  auto Printed = runToolIn(Dir, Boot, "qemu", O.TimeoutSeconds);
  if (!Printed)
    return Printed.takeError();
  static const std::regex RunOk(R"(cuvil: run ok cycles=(\d+) instret=(\d+))");
  std::smatch M;
  if (!std::regex_search(*Printed, M, RunOk))
    return makeError("qemu: the runner did not print 'cuvil: run ok "
                     "cycles=N instret=N' (output in {}/qemu.out{})",
                     Dir, W.kept() ? "" : "; keep it with --keep-work DIR");
  BoardRunResult R;
  if (!llvm::to_integer(M[1].str(), R.Cycles) ||
      !llvm::to_integer(M[2].str(), R.Instructions))
    return makeError("qemu: counts out of range in '{}'", M[0].str());
  if (!CM.Header.ShapedOutputs.empty()) {
    // The shape each output has in this run, and so its bytes.
    static const std::regex Shape(R"(cuvil: output (\d+) shape ([\d,]*))");
    R.OutputShapes.resize(OutBytes.size());
    std::vector<bool> Seen(OutBytes.size(), false);
    for (auto It =
             std::sregex_iterator(Printed->begin(), Printed->end(), Shape);
         It != std::sregex_iterator(); ++It) {
      size_t I = 0;
      if (!llvm::to_integer((*It)[1].str(), I) || I >= OutBytes.size())
        return makeError("qemu: the runner printed '{}', for no output",
                         It->str());
      Seen[I] = true;
      std::string Text = (*It)[2].str();
      llvm::SmallVector<llvm::StringRef> Dims;
      llvm::StringRef(Text).split(Dims, ',', -1, false);
      uint64_t Count = 1;
      for (llvm::StringRef D : Dims) {
        int64_t V = 0;
        if (!llvm::to_integer(D, V) || V < 0)
          return makeError("qemu: a bad shape in '{}'", It->str());
        R.OutputShapes[I].push_back(V);
        Count *= static_cast<uint64_t>(V);
      }
      OutBytes[I] =
          std::min(OutBytes[I], Count * dtypeSize(CM.G->outputs()[I]->dtype()));
    }
    for (size_t I = 0; I < Seen.size(); ++I)
      if (!Seen[I])
        return makeError("qemu: the runner printed no shape for output {}", I);
  }
  for (size_t I = 0; I < OutBytes.size(); ++I) {
    auto Data = readOutputFile(fmt::format("{}/out_{}.bin", Dir, I),
                               "the runner", I, OutBytes[I]);
    if (!Data)
      return Data.takeError();
    R.Outputs.push_back(std::move(*Data));
  }
  if (CM.Header.Profiled) { // its size is checked where it is decoded
    std::string Path = Dir + "/profile.bin";
    auto B = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
    if (!B)
      return makeError("the runner did not write '{}': {}", Path,
                       B.getError().message());
    R.ProfileTable = (*B)->getBuffer().str();
  }
  return R;
}

} // namespace cuvil
