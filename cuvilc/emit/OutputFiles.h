//===- OutputFiles.h - All-or-nothing writing of build outputs --*- C++ -*-===//
#ifndef CUVIL_EMIT_OUTPUTFILES_H
#define CUVIL_EMIT_OUTPUTFILES_H

#include <llvm/Support/Error.h>
#include <string>
#include <vector>

namespace cuvil {

struct OutputFile {
  std::string Path;
  std::string Contents;
  /// What the file is, with the option that names it ("the header
  /// (--header)"), for the messages; null: "an output".
  const char *Role = nullptr;
};

/// A file the command reads, which no output may replace.
struct InputFile {
  std::string Path;
  const char *Role; ///< "the input model", ...
};

/// What writeOutputFiles refuses before it writes, and a destination
/// whose directory is missing or not writable, or that is a directory: for
/// a command to say before its work (Files' contents are not read).
llvm::Error checkOutputFiles(const std::vector<OutputFile> &Files,
                             const std::vector<InputFile> &Inputs = {});

/// Writes every file to a temporary beside its destination, then renames
/// them all into place. On any failure the temporaries are removed and no
/// destination is touched (except, if a rename fails midway, the files
/// already renamed are removed again). Refused before anything is written:
/// two outputs that are one file, and an output that is one of Inputs
/// (the same file by any path: ./m.onnx, a symlink, a hard link).
llvm::Error writeOutputFiles(const std::vector<OutputFile> &Files,
                             const std::vector<InputFile> &Inputs = {});

} // namespace cuvil

#endif
