//===- RuntimeOps.cpp - Op records defined for one compilation -----------===//
#include "ops/RuntimeOps.h"

namespace cuvil {

bool RuntimeOps::add(std::string Domain, std::string Name, const OpDef *Def) {
  return Defs.emplace(std::make_pair(std::move(Domain), std::move(Name)), Def)
      .second;
}

const OpDef *RuntimeOps::lookup(std::string_view Domain,
                                std::string_view Name) const {
  auto It = Defs.find({std::string(Domain), std::string(Name)});
  return It == Defs.end() ? nullptr : It->second;
}

std::vector<const OpDef *> RuntimeOps::defs() const {
  std::vector<const OpDef *> All;
  for (const auto &[Key, Def] : Defs)
    All.push_back(Def);
  return All;
}

} // namespace cuvil
