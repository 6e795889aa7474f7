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
};

/// Writes every file to a temporary beside its destination, then renames
/// them all into place. On any failure the temporaries are removed and no
/// destination is touched (except, if a rename fails midway, the files
/// already renamed are removed again).
llvm::Error writeOutputFiles(const std::vector<OutputFile> &Files);

} // namespace cuvil

#endif
