//===- OpRegistry.cpp - The table of supported operators -----------------===//
#include "ops/OpRegistry.h"

#include "ir/Diagnostic.h"

#include <algorithm>
#include <array>
#include <limits>

namespace cuvil {

#define CUVIL_OP(Name, Def) extern const OpDef Def;
#include "ops/Ops.def"
#define CUVIL_INTERNAL_OP(Name, Def) extern const OpDef Def;
#include "ops/InternalOps.def"

namespace {
struct Entry {
  std::string_view Name;
  const OpDef *Def;
};

constexpr std::array Table = {
#define CUVIL_OP(Name, Def) Entry{#Name, &(Def)},
#include "ops/Ops.def"
};

constexpr std::array InternalTable = {
#define CUVIL_INTERNAL_OP(Name, Def) Entry{#Name, &(Def)},
#include "ops/InternalOps.def"
};

template <size_t Size>
constexpr bool isSorted(const std::array<Entry, Size> &T) {
  for (size_t I = 1; I < T.size(); ++I)
    if (!(T[I - 1].Name < T[I].Name))
      return false;
  return true;
}
static_assert(isSorted(Table), "keep Ops.def sorted by op name");
static_assert(isSorted(InternalTable),
              "keep InternalOps.def sorted by op name");

template <size_t Size>
const OpDef *find(const std::array<Entry, Size> &T, std::string_view Name) {
  auto It = std::lower_bound(
      T.begin(), T.end(), Name,
      [](const Entry &E, std::string_view N) { return E.Name < N; });
  if (It == T.end() || It->Name != Name)
    return nullptr;
  return It->Def;
}

template <size_t Size>
std::vector<std::string_view> names(const std::array<Entry, Size> &T) {
  std::vector<std::string_view> Names;
  for (const Entry &E : T)
    Names.push_back(E.Name);
  return Names;
}
} // namespace

const OpDef *lookupOp(std::string_view OpType) { return find(Table, OpType); }

std::vector<std::string_view> supportedOps() { return names(Table); }

const OpDef *lookupInternalOp(std::string_view Name) {
  return find(InternalTable, Name);
}

std::vector<std::string_view> internalOps() { return names(InternalTable); }

const OpDef *lookupOpInDomain(std::string_view Domain,
                              std::string_view OpType) {
  if (Domain.empty() || Domain == "ai.onnx")
    return lookupOp(OpType);
  return Domain == InternalDomain ? lookupInternalOp(OpType) : nullptr;
}

Node *rebuildAs(Graph &G, Node &N, const OpDef &Def) {
  auto Attrs = N.attrs();
  Node *R = G.replaceNode(&N, Def.Name, &Def, N.inputs());
  for (auto &[Name, V] : Attrs)
    R->setAttr(Name, std::move(V));
  return R;
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

std::pair<float, float> noClamp() {
  float Inf = std::numeric_limits<float>::infinity();
  return {-Inf, Inf};
}

std::pair<float, float> fusedActivation(const Node &N) {
  auto [Lo, Hi] = noClamp();
  return {N.getFloat(ClampLoAttr, Lo), N.getFloat(ClampHiAttr, Hi)};
}

bool hasFusedActivation(const Node &N) {
  return N.hasAttr(ClampLoAttr) || N.hasAttr(ClampHiAttr);
}

void setFusedActivation(Node &N, std::pair<float, float> Bounds) {
  N.setAttr(ClampLoAttr, Bounds.first);
  N.setAttr(ClampHiAttr, Bounds.second);
}

llvm::Expected<int64_t> normalizeAxis(const Node &N, int64_t Axis,
                                      size_t Rank) {
  int64_t R = static_cast<int64_t>(Rank);
  if (Axis < -R || Axis >= std::max<int64_t>(R, 1))
    return nodeError(N, "axis {} is out of range for rank {}", Axis, Rank);
  return Axis < 0 ? Axis + R : Axis;
}

} // namespace cuvil
