//===- Process.h - The tools cuvilc runs, and cuvil's data directory -*- C++
//-*-===//
//
// `cuvilc run` drives programs outside the compiler: make, the firmware's C
// compiler and QEMU for a board (BoardRunner.h), node with ONNX Runtime for
// --compare-ort (OrtReference.h). They are started without a shell, their
// output goes to files of a work directory, and a failure says what was
// run and shows the end of what it printed. A program that is not
// installed is named with the Debian package that provides it.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNNER_PROCESS_H
#define CUVIL_RUNNER_PROCESS_H

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <ostream>
#include <string>
#include <vector>

namespace cuvil {

/// Where cuvil's runtime, runner, linker scripts and reference scripts
/// are: $CUVIL_HOME if set, else ../share/cuvil beside the cuvilc
/// executable if it exists (an installed cuvil), else the source tree
/// cuvilc was built from.
std::string cuvilHome();

/// cuvilHome()/Relative, or an error if it does not exist.
llvm::Expected<std::string> homeFile(const std::string &Relative);

/// The Debian package of a tool cuvilc runs (for "not installed" errors).
std::string packageOf(llvm::StringRef Tool);

/// The path of a program: as given if it has a slash, else found on PATH.
llvm::Expected<std::string> findTool(const std::string &Name);

/// Runs Cmd (its first word found by findTool) with stdin from /dev/null
/// and its output in WorkDir/<Step>.out and .err, for at most
/// TimeoutSeconds (0: no limit); returns what it printed on stdout.
llvm::Expected<std::string> runTool(const std::vector<std::string> &Cmd,
                                    const std::string &Step,
                                    const std::string &WorkDir,
                                    unsigned TimeoutSeconds = 0);

/// runTool with Dir as the working directory of the child (QEMU's
/// semihosting opens files relative to it); cuvilc's own is restored.
llvm::Expected<std::string> runToolIn(const std::string &Dir,
                                      const std::vector<std::string> &Cmd,
                                      const std::string &Step,
                                      unsigned TimeoutSeconds);

/// The contents of Path, which Producer (a tool cuvilc ran) wrote for
/// output Index of Bytes bytes: an error names the tool when the file is
/// missing or has another size.
llvm::Expected<std::string> readOutputFile(const std::string &Path,
                                           llvm::StringRef Producer,
                                           size_t Index, uint64_t Bytes);

/// Writes Bytes to Path (created or truncated).
llvm::Error writeFile(const std::string &Path, llvm::StringRef Bytes);

/// A work directory: a new temporary one, removed on destruction, or one
/// the user keeps (--keep-work). A temporary directory that cannot be
/// removed is said on Log, not an error.
class WorkDir {
public:
  explicit WorkDir(std::ostream &Log) : Log(Log) {}
  ~WorkDir();
  WorkDir(const WorkDir &) = delete;
  WorkDir &operator=(const WorkDir &) = delete;

  /// Creates KeepPath (kept afterwards) or, when it is empty, a temporary
  /// directory named after Prefix.
  llvm::Error create(const std::string &KeepPath, llvm::StringRef Prefix);
  const std::string &path() const { return Path; }
  bool kept() const { return Keep; }

private:
  std::ostream &Log;
  std::string Path;
  bool Keep = false;
};

} // namespace cuvil

#endif
