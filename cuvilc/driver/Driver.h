//===- Driver.h - The cuvilc commands as library calls ----------*- C++ -*-===//
//
// The tool (tool/main.cpp) only parses the command line; each subcommand is
// one function here that runs the stages and returns an Error. Errors that
// come from the user's input are ModelError (exit code 1); others are
// usage errors (exit code 2).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_DRIVER_H
#define CUVIL_DRIVER_DRIVER_H

#include <llvm/Support/Error.h>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace cuvil {

struct BuildOptions {
  std::string Model;          ///< Input .onnx path.
  std::string Target;         ///< Target name.
  std::string Out;            ///< Object path.
  std::string Header;         ///< Default: Out with .h.
  std::string LinkerScript;   ///< Default: Out with .ld.
  std::string Report;         ///< JSON report path; empty: none.
  std::string Name;           ///< C prefix; default from the model file name.
  std::string ExternalWeights; ///< .cuvw path; empty: embed.
  std::vector<std::string> Emit;    ///< "llvm", "asm".
  std::vector<std::string> DumpIR;  ///< Pass names, or "all".
  std::map<std::string, int64_t> Dims;
};

/// Whether an error is the user's input's fault (exit 1) or a usage error
/// (exit 2). Usage errors are created with usageError().
llvm::Error usageError(const std::string &Msg);
bool isUsageError(const llvm::Error &E);

/// `cuvilc build`: writes the object, header, linker script (and blob).
/// Progress/dumps go to Log.
llvm::Error runBuild(const BuildOptions &Opts, std::ostream &Log);

/// `cuvilc inspect`: graph summary after shape inference.
llvm::Error runInspect(const std::string &Model, const std::string &Target,
                       const std::map<std::string, int64_t> &Dims,
                       std::ostream &Out);

/// `cuvilc targets`: the targets and their memory regions.
llvm::Error runTargets(std::ostream &Out);

/// The model name derived from a path: base name without extension, as a
/// lower-case C identifier.
std::string defaultModelName(const std::string &Path);

} // namespace cuvil

#endif
