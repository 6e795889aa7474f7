//===- BoardRunner.cpp - Run a compiled model on a board under QEMU -------===//
#include "runner/BoardRunner.h"

#include "driver/Compile.h"
#include "emit/HeaderWriter.h"
#include "emit/LinkerScript.h"
#include "ir/Diagnostic.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/StringSaver.h>
#include <llvm/Support/raw_ostream.h>
#include <regex>

#ifndef CUVIL_SOURCE_DIR
#error "CUVIL_SOURCE_DIR must name the source tree cuvilc is built from"
#endif

namespace cuvil {

namespace {

/// The runner's buffer alignment and default I/O pool (runner.c's
/// IO_ALIGN and CUVIL_RUNNER_IO_POOL_BYTES).
constexpr uint64_t RunnerIoAlign = 64;
constexpr uint64_t RunnerIoPoolDefault = 1u << 20;

/// Lines of a failing tool's output an error shows.
constexpr size_t ToolOutputLines = 20;

/// The Debian/Ubuntu package of a tool cuvilc runs, for the message that
/// it is missing.
std::string packageOf(llvm::StringRef Tool) {
  if (Tool.starts_with("qemu-system-riscv"))
    return "qemu-system-misc";
  if (Tool.starts_with("qemu-system-aarch64") ||
      Tool.starts_with("qemu-system-arm"))
    return "qemu-system-arm";
  if (Tool.starts_with("qemu-system-"))
    return "qemu-system";
  if (Tool.consume_front("llvm-ar"))
    return ("llvm" + Tool).str(); // llvm-ar-19 is in llvm-19
  if (Tool.ends_with("-gcc"))
    return ("gcc-" + Tool.drop_back(4)).str();
  return Tool.str(); // make, clang-19
}

/// The path of a program named by the user or a target file: as given if it
/// has a slash, else found on PATH.
llvm::Expected<std::string> findTool(const std::string &Name) {
  if (Name.find('/') != std::string::npos) {
    if (!llvm::sys::fs::can_execute(Name))
      return makeError("'{}' is not an executable file", Name);
    return Name;
  }
  auto P = llvm::sys::findProgramByName(Name);
  if (!P)
    return makeError("'{}' is not installed (not found on PATH; Debian/Ubuntu "
                     "package {})",
                     Name, packageOf(Name));
  return *P;
}

/// Runs Cmd (its first word found by findTool) with stdin from /dev/null and
/// its output in WorkDir/<Step>.out and .err; returns what it printed on
/// stdout. A failure says what was run and the end of its output.
llvm::Expected<std::string> runTool(const std::vector<std::string> &Cmd,
                                    const std::string &Step,
                                    const std::string &WorkDir,
                                    unsigned TimeoutSeconds = 0) {
  auto Program = findTool(Cmd[0]);
  if (!Program)
    return Program.takeError();
  std::string OutPath = WorkDir + "/" + Step + ".out";
  std::string ErrPath = WorkDir + "/" + Step + ".err";
  std::vector<llvm::StringRef> Args(Cmd.begin(), Cmd.end());
  std::optional<llvm::StringRef> Redirects[] = {
      llvm::StringRef(), llvm::StringRef(OutPath), llvm::StringRef(ErrPath)};
  std::string ErrMsg;
  bool ExecFailed = false;
  int Code = llvm::sys::ExecuteAndWait(*Program, Args, std::nullopt, Redirects,
                                       TimeoutSeconds, 0, &ErrMsg, &ExecFailed);
  auto Read = [](const std::string &Path) {
    auto B = llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
    return B ? (*B)->getBuffer().str() : std::string();
  };
  std::string Out = Read(OutPath);
  if (Code == 0)
    return Out;
  std::string Why;
  if (ExecFailed)
    Why = fmt::format("cannot execute '{}': {}", *Program, ErrMsg);
  else if (Code == -2 && TimeoutSeconds &&
           llvm::StringRef(ErrMsg).contains("timed out"))
    Why = fmt::format("timed out after {} s (--timeout)", TimeoutSeconds);
  else if (Code < 0)
    Why = ErrMsg.empty() ? "crashed" : ErrMsg;
  else
    Why = fmt::format("exit code {}", Code);
  llvm::SmallVector<llvm::StringRef> Lines;
  std::string All = Out + Read(ErrPath);
  llvm::StringRef(All).trim().split(Lines, '\n');
  size_t From =
      Lines.size() > ToolOutputLines ? Lines.size() - ToolOutputLines : 0;
  std::string Tail;
  for (size_t I = From; I < Lines.size(); ++I)
    if (!Lines[I].trim().empty())
      Tail += fmt::format("\n  | {}", Lines[I].rtrim());
  // The command as a shell would take it back: words with blanks quoted.
  std::vector<std::string> Shown;
  for (const std::string &Word : Cmd)
    Shown.push_back(Word.find_first_of(" \t'\"") == std::string::npos
                        ? Word
                        : "'" + Word + "'");
  return makeError("{}: {}\n  $ {}{}", Step, Why, fmt::join(Shown, " "), Tail);
}

llvm::Error writeFile(const std::string &Path, llvm::StringRef Bytes) {
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC, llvm::sys::fs::OF_None);
  if (EC)
    return makeError("'{}': cannot write: {}", Path, EC.message());
  OS << Bytes;
  OS.close();
  if (OS.has_error())
    return makeError("'{}': cannot write: {}", Path, OS.error().message());
  return llvm::Error::success();
}

/// The work directory: removed on destruction unless the user keeps it. A
/// temporary directory that cannot be removed is said, not an error.
struct WorkDir {
  std::string Path;
  bool Keep = false;
  std::ostream *Log = nullptr;
  ~WorkDir() {
    if (Path.empty() || Keep)
      return;
    if (std::error_code EC = llvm::sys::fs::remove_directories(Path))
      *Log << "cuvilc run: cannot remove the work directory " << Path << ": "
           << EC.message() << "\n";
  }
};

/// Runs Cmd as runTool does with Dir as the working directory: QEMU's
/// semihosting opens the runner's files relative to it, and ExecuteAndWait
/// starts a child in the parent's directory. cuvilc's own directory is
/// restored afterwards (the user's relative paths are read after the run).
llvm::Expected<std::string> runToolIn(const std::string &Dir,
                                      const std::vector<std::string> &Cmd,
                                      const std::string &Step,
                                      unsigned TimeoutSeconds) {
  llvm::SmallString<256> Old;
  if (std::error_code EC = llvm::sys::fs::current_path(Old))
    return makeError("cannot get the current directory: {}", EC.message());
  if (std::error_code EC = llvm::sys::fs::set_current_path(Dir))
    return makeError("'{}': cannot change to it: {}", Dir, EC.message());
  auto R = runTool(Cmd, Step, Dir, TimeoutSeconds);
  if (std::error_code EC = llvm::sys::fs::set_current_path(Old)) {
    if (!R)
      llvm::consumeError(R.takeError());
    return makeError("'{}': cannot change back to it: {}", Old.str(),
                     EC.message());
  }
  return R;
}

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

/// A file of cuvil's data directory that must exist.
llvm::Expected<std::string> homeFile(const std::string &Relative) {
  std::string Path = cuvilHome() + "/" + Relative;
  if (!llvm::sys::fs::exists(Path))
    return makeError("'{}' does not exist: is cuvil's data directory {} "
                     "complete? (set CUVIL_HOME to the cuvil source tree)",
                     Path, cuvilHome());
  return Path;
}

} // namespace

std::string cuvilHome() {
  if (const char *Env = std::getenv("CUVIL_HOME"))
    return Env;
  std::string Self = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  if (!Self.empty()) {
    llvm::SmallString<256> Installed(llvm::sys::path::parent_path(Self));
    llvm::sys::path::append(Installed, "..", "share", "cuvil");
    if (llvm::sys::fs::is_directory(Installed)) {
      llvm::sys::path::remove_dots(Installed, /*remove_dot_dot=*/true);
      return Installed.str().str();
    }
  }
  return CUVIL_SOURCE_DIR;
}

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
  for (const std::string &Tool : Tools)
    if (auto P = findTool(Tool); !P)
      return P.takeError();

  WorkDir W;
  W.Log = &Log;
  if (!O.KeepWork.empty()) {
    W.Keep = true;
    if (auto EC = llvm::sys::fs::create_directories(O.KeepWork))
      return makeError("'{}': cannot create the directory: {}", O.KeepWork,
                       EC.message());
    llvm::SmallString<256> Abs(O.KeepWork);
    if (auto EC = llvm::sys::fs::make_absolute(Abs))
      return makeError("'{}': {}", O.KeepWork, EC.message());
    W.Path = Abs.str().str();
  } else {
    llvm::SmallString<256> Tmp;
    if (auto EC = llvm::sys::fs::createUniqueDirectory("cuvil-run", Tmp))
      return makeError("cannot create a temporary directory: {}", EC.message());
    W.Path = Tmp.str().str();
  }
  const std::string &Dir = W.Path;

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

  // The runtime library and the flags runtime.mk gives a firmware.
  std::vector<std::string> Make = {"make",
                                   "--no-print-directory",
                                   "-f",
                                   *RuntimeMk,
                                   "CUVIL_TARGET=" + T.Name,
                                   "CC=" + O.CC,
                                   "CUVIL_RT_BUILD=" + Dir + "/runtime",
                                   "CUVIL_LINKER_SCRIPT=" + *BaseScript};
  const char *Names[] = {"CUVIL_RT_LIB", "CUVIL_RT_CFLAGS", "CUVIL_RT_LDFLAGS",
                         "CUVIL_RT_LDLIBS"};
  std::vector<std::string> Query = Make;
  Query.insert(Query.end(),
               {"-s", "--eval", "cuvil-run-print-%: ; @echo '$($*)'"});
  for (const char *N : Names)
    Query.push_back(std::string("cuvil-run-print-") + N);
  Log << "cuvilc run: building the " << T.Name << " runtime in " << Dir << "\n";
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
  std::vector<std::string> BuildLib = Make;
  BuildLib.insert(BuildLib.end(), Rt[0].begin(), Rt[0].end());
  if (auto R = runTool(BuildLib, "runtime", Dir); !R)
    return R.takeError();

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
  for (size_t I = 0; I < OutBytes.size(); ++I) {
    std::string Old = fmt::format("{}/out_{}.bin", Dir, I);
    if (std::error_code EC = llvm::sys::fs::remove(Old))
      return makeError("'{}': cannot remove it: {}", Old, EC.message());
  }
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
                     Dir, W.Keep ? "" : "; keep it with --keep-work DIR");
  BoardRunResult R;
  if (!llvm::to_integer(M[1].str(), R.Cycles) ||
      !llvm::to_integer(M[2].str(), R.Instructions))
    return makeError("qemu: counts out of range in '{}'", M[0].str());
  for (size_t I = 0; I < OutBytes.size(); ++I) {
    std::string Path = fmt::format("{}/out_{}.bin", Dir, I);
    auto B = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
    if (!B)
      return makeError("the runner did not write '{}': {}", Path,
                       B.getError().message());
    if ((*B)->getBufferSize() != OutBytes[I])
      return makeError("'{}' holds {} bytes, output {} has {}", Path,
                       (*B)->getBufferSize(), I, OutBytes[I]);
    R.Outputs.push_back((*B)->getBuffer().str());
  }
  return R;
}

} // namespace cuvil
