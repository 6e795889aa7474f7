//===- OpRegistry.cpp - The table of supported operators -----------------===//
#include "ops/OpRegistry.h"

#include "ir/Diagnostic.h"

#include <algorithm>
#include <array>
#include <limits>

namespace cuvil {

#define CUVIL_OP(Name, Def) extern const OpDef Def;
#include "ops/Ops.def"

namespace {
struct Entry {
  std::string_view Name;
  const OpDef *Def;
};

constexpr std::array Table = {
#define CUVIL_OP(Name, Def) Entry{#Name, &Def},
#include "ops/Ops.def"
};

constexpr bool isSorted() {
  for (size_t I = 1; I < Table.size(); ++I)
    if (!(Table[I - 1].Name < Table[I].Name))
      return false;
  return true;
}
static_assert(isSorted(), "keep Ops.def sorted by op name");
} // namespace

const OpDef *lookupOp(std::string_view OpType) {
  auto It = std::lower_bound(
      Table.begin(), Table.end(), OpType,
      [](const Entry &E, std::string_view N) { return E.Name < N; });
  if (It == Table.end() || It->Name != OpType)
    return nullptr;
  return It->Def;
}

std::vector<std::string_view> supportedOps() {
  std::vector<std::string_view> Names;
  for (const Entry &E : Table)
    Names.push_back(E.Name);
  return Names;
}

int64_t noMacs(const Node &) { return 0; }

llvm::Error requireF32(const Node &N) {
  auto Check = [&](const Value *V, const char *What) -> llvm::Error {
    if (V && V->dtype() != DType::F32)
      return nodeError(N, "{} '{}' has element type {}; only f32 is supported",
                       What, V->name(), dtypeName(V->dtype()));
    return llvm::Error::success();
  };
  for (const Value *V : N.inputs())
    if (auto E = Check(V, "input"))
      return E;
  for (const Value *V : N.outputs())
    if (auto E = Check(V, "output"))
      return E;
  return llvm::Error::success();
}

std::pair<float, float> fusedActivation(const Node &N) {
  float Inf = std::numeric_limits<float>::infinity();
  return {N.getFloat("cuvil.act_lo", -Inf), N.getFloat("cuvil.act_hi", Inf)};
}

llvm::Expected<int64_t> normalizeAxis(const Node &N, int64_t Axis,
                                      size_t Rank) {
  int64_t R = static_cast<int64_t>(Rank);
  if (Axis < -R || Axis >= std::max<int64_t>(R, 1))
    return nodeError(N, "axis {} is out of range for rank {}", Axis, Rank);
  return Axis < 0 ? Axis + R : Axis;
}

} // namespace cuvil
