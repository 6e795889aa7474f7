//===- IRParser.h - Reads the textual IR back into a Graph ------*- C++ -*-===//
//
// The inverse of Graph::print (syntax in ir/IRPrinter.cpp), for cuvil-opt
// and tests written by hand. cuvil_ir does not know the ops: the caller
// passes the lookup that gives each node its OpDef.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_IR_IRPARSER_H
#define CUVIL_IR_IRPARSER_H

#include "ir/Graph.h"

#include <functional>
#include <llvm/Support/Error.h>
#include <memory>
#include <string_view>

namespace cuvil {

/// The definition of operator OpType of Domain ("" for the standard one),
/// or null when there is none (verification then rejects the node).
using OpLookup = std::function<const OpDef *(std::string_view Domain,
                                             std::string_view OpType)>;

/// Parses Text (named File in errors). Errors say where and what was
/// expected: "m.cir:3:17: expected ')' after the inputs, found '{'".
llvm::Expected<std::unique_ptr<Graph>>
parseIR(std::string_view Text, const OpLookup &Lookup,
        std::string_view File = "<input>");

} // namespace cuvil

#endif
