//===- Process.cpp --------------------------------------------------------===//
#include "runner/Process.h"

#include "ir/Diagnostic.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>
#include <optional>

#ifndef CUVIL_SOURCE_DIR
#error "CUVIL_SOURCE_DIR must name the source tree cuvilc is built from"
#endif

namespace cuvil {

namespace {
/// Lines of a failing tool's output an error shows.
constexpr size_t ToolOutputLines = 20;
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

/// A file of cuvil's data directory that must exist.
llvm::Expected<std::string> homeFile(const std::string &Relative) {
  std::string Path = cuvilHome() + "/" + Relative;
  if (!llvm::sys::fs::exists(Path))
    return makeError("'{}' does not exist: is cuvil's data directory {} "
                     "complete? (set CUVIL_HOME to the cuvil source tree)",
                     Path, cuvilHome());
  return Path;
}

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
  if (Tool == "node")
    return "nodejs";
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

// A failure says what was run and the end of its output.
llvm::Expected<std::string> runTool(const std::vector<std::string> &Cmd,
                                    const std::string &Step,
                                    const std::string &WorkDir,
                                    unsigned TimeoutSeconds) {
  auto Program = findTool(Cmd[0]);
  if (!Program)
    return Program.takeError();
  std::string OutPath = WorkDir + "/" + Step + ".out";
  std::string ErrPath = WorkDir + "/" + Step + ".err";
  // ExecuteAndWait opens the redirections without truncating them: in a
  // kept work directory an earlier run's output would otherwise be read
  // as this one's.
  for (const std::string &Path : {OutPath, ErrPath})
    if (std::error_code EC = llvm::sys::fs::remove(Path))
      return makeError("'{}': cannot remove it: {}", Path, EC.message());
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

llvm::Expected<std::string> readOutputFile(const std::string &Path,
                                           llvm::StringRef Producer,
                                           size_t Index, uint64_t Bytes) {
  auto B = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                       /*RequiresNullTerminator=*/false);
  if (!B)
    return makeError("{} did not write '{}': {}", Producer, Path,
                     B.getError().message());
  if ((*B)->getBufferSize() != Bytes)
    return makeError("'{}' (by {}) holds {} bytes, output {} has {}", Path,
                     Producer, (*B)->getBufferSize(), Index, Bytes);
  return (*B)->getBuffer().str();
}

WorkDir::~WorkDir() {
  if (Path.empty() || Keep)
    return;
  if (std::error_code EC = llvm::sys::fs::remove_directories(Path))
    Log << "cuvilc run: cannot remove the work directory " << Path << ": "
        << EC.message() << "\n";
}

llvm::Error WorkDir::create(const std::string &KeepPath,
                            llvm::StringRef Prefix) {
  if (KeepPath.empty()) {
    llvm::SmallString<256> Tmp;
    if (auto EC = llvm::sys::fs::createUniqueDirectory(Prefix, Tmp))
      return makeError("cannot create a temporary directory: {}", EC.message());
    Path = Tmp.str().str();
    return llvm::Error::success();
  }
  Keep = true;
  if (auto EC = llvm::sys::fs::create_directories(KeepPath))
    return makeError("'{}': cannot create the directory: {}", KeepPath,
                     EC.message());
  llvm::SmallString<256> Abs(KeepPath);
  if (auto EC = llvm::sys::fs::make_absolute(Abs))
    return makeError("'{}': {}", KeepPath, EC.message());
  Path = Abs.str().str();
  return llvm::Error::success();
}

} // namespace cuvil
