//===- Diagnostic.h - Errors that name the node and op ----------*- C++ -*-===//
//
// Everything a user's model can trigger is reported as an llvm::Error whose
// message names the ONNX node and op: "node 'conv1' (Conv): <reason>". The
// tool prefixes "error: <file>: ". Several errors are joined with
// llvm::joinErrors so that one run reports all of them.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_IR_DIAGNOSTIC_H
#define CUVIL_IR_DIAGNOSTIC_H

#include "ir/Escape.h"
#include "ir/Graph.h"

#include <fmt/format.h>
#include <llvm/Support/Error.h>

namespace cuvil {

inline std::string describeNode(const Node &N) {
  // Names are any bytes: a newline in one must not start a new message.
  return fmt::format("node '{}' ({})", printable(N.name()),
                     printable(N.opType()));
}

template <typename... Args>
llvm::Error nodeError(const Node &N, fmt::format_string<Args...> Fmt,
                      Args &&...A) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(), "%s: %s", describeNode(N).c_str(),
      fmt::format(Fmt, std::forward<Args>(A)...).c_str());
}

template <typename... Args>
llvm::Error makeError(fmt::format_string<Args...> Fmt, Args &&...A) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(), "%s",
      fmt::format(Fmt, std::forward<Args>(A)...).c_str());
}

} // namespace cuvil

#endif
