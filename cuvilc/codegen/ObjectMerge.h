//===- ObjectMerge.h - Join relocatable ELF objects into one -----*- C++
//-*-===//
//
// Code generation of a large model runs in parts (SplitCodegen), each an
// object of its own; the user still links one model.o. mergeObjects joins
// the parts as a relocatable link would, without a linker: every section
// of every part stays a section of its own (ELF allows equal names, and
// linkers place them by name as before), the symbols one part defines
// resolve the references of the others, and the symbols that were internal
// to the model, made global only to cross between parts, become local
// again. The result exports exactly what the one-piece object exported.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_OBJECTMERGE_H
#define CUVIL_CODEGEN_OBJECTMERGE_H

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <set>
#include <string>
#include <vector>

namespace cuvil {

/// One ELF64 little-endian relocatable object from Parts (objects of one
/// target, with RELA relocations, as LLVM writes them), in their order.
/// Symbols named in Localize must be defined by one part; they become
/// local. Any other global defined twice, a section group or an extended
/// section index is an error.
llvm::Expected<std::string> mergeObjects(const std::vector<std::string> &Parts,
                                         const std::set<std::string> &Localize);

/// Gives the NOBITS section Name of Object (one ELF64 little-endian
/// relocatable object, as mergeObjects writes) the contents Bytes, exactly
/// its size: it becomes PROGBITS, its bytes appended to the file. The
/// embedded weights are generated as such a placeholder (EntryBuilder), so
/// that neither LLVM nor the code generator's processes and merges copy
/// them.
llvm::Error fillNobitsSection(std::string &Object, llvm::StringRef Name,
                              llvm::ArrayRef<uint8_t> Bytes);

} // namespace cuvil

#endif
