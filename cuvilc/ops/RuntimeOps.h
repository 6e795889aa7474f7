//===- RuntimeOps.h - Op records defined for one compilation ----*- C++ -*-===//
//
// cuvil's own ops are a static table (OpRegistry.h, Ops.def). Ops the user
// declares at run time (--custom-ops, see ops/custom/CustomOp.h) live in a
// RuntimeOps table made for one compilation, looked up by (domain, name);
// the importer consults it for nodes outside the ONNX domains.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_RUNTIMEOPS_H
#define CUVIL_OPS_RUNTIMEOPS_H

#include "ops/OpRegistry.h"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuvil {

/// Records of ops defined at run time. The table does not own them.
class RuntimeOps {
public:
  /// Registers Def as op Name of Domain; false if that op is taken.
  bool add(std::string Domain, std::string Name, const OpDef *Def);
  /// The record of op Name of Domain, or null.
  const OpDef *lookup(std::string_view Domain, std::string_view Name) const;
  /// Every record, sorted by (domain, name).
  std::vector<const OpDef *> defs() const;
  bool empty() const { return Defs.empty(); }

private:
  std::map<std::pair<std::string, std::string>, const OpDef *> Defs;
};

} // namespace cuvil

#endif
