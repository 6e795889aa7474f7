//===- Attrs.cpp - Typed operator attributes ------------------------------===//
#include "ops/Attrs.h"

#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

namespace cuvil {

const char *attrKindName(AttrKind K) {
  switch (K) {
  case AttrKind::Int: return "int";
  case AttrKind::Float: return "float";
  case AttrKind::String: return "string";
  case AttrKind::Ints: return "ints";
  case AttrKind::Floats: return "floats";
  case AttrKind::Strings: return "strings";
  }
  return "?";
}

AttrKind attrKindOf(const AttrValue &V) {
  // AttrValue's alternatives are in AttrKind's order.
  return static_cast<AttrKind>(V.index());
}

llvm::Error verifyAttrKinds(const Node &N) {
  if (!N.def() || !N.def()->Attrs)
    return llvm::Error::success();
  for (const auto &[Name, Value] : N.attrs())
    for (const AttrSpec *S = N.def()->Attrs; S->Name; ++S) {
      if (Name != S->Name || attrKindOf(Value) == S->Kind)
        continue;
      return nodeError(N,
                       "attribute '{}' of {} must be of kind {}, but the "
                       "model gives a {}",
                       Name, N.opType(), attrKindName(S->Kind),
                       attrKindName(attrKindOf(Value)));
    }
  return llvm::Error::success();
}

namespace attr_detail {
std::vector<float> Reader<AttrKind::Floats>::read(const Node &N,
                                                  const char *Name,
                                                  const std::vector<float> &D) {
  auto It = N.attrs().find(Name);
  if (It == N.attrs().end())
    return D;
  if (auto *V = std::get_if<std::vector<float>>(&It->second))
    return *V;
  return D;
}
} // namespace attr_detail

} // namespace cuvil
