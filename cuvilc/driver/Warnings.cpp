//===- Warnings.cpp -------------------------------------------------------===//
#include "driver/Warnings.h"

#include "ops/OpRegistry.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

namespace cuvil {

namespace {

/// The ONNX name of N (its first origin).
std::string onnxName(const Node &N) {
  return N.origin().Names.empty() ? N.name() : N.origin().Names.front();
}

bool isInteger(DType T) { return T == DType::I8 || T == DType::U8; }
bool isFloat(DType T) {
  return T == DType::F32 || T == DType::F16 || T == DType::BF16 ||
         T == DType::F64;
}

/// Whether N does arithmetic whose output is of a kind Pred accepts.
template <typename Pred> bool computesIn(const Node &N, Pred P) {
  if (!N.def() || N.def()->Macs(N) == 0 || N.outputs().empty())
    return false;
  return P(N.outputs().front()->dtype());
}

void spills(const MemoryPlan &Plan, const std::string &FastRegion,
            std::vector<BuildWarning> &Out) {
  // Spilled buffers by the region they went to.
  std::map<std::string, std::vector<const ArenaBuffer *>> To;
  for (const ArenaBuffer &B : Plan.Buffers)
    if (Plan.Arenas[B.Arena].Region != FastRegion)
      To[Plan.Arenas[B.Arena].Region].push_back(&B);
  for (auto &[Region, Bufs] : To) {
    std::sort(Bufs.begin(), Bufs.end(),
              [](const ArenaBuffer *L, const ArenaBuffer *R) {
                return L->First < R->First;
              });
    int64_t Bytes = 0;
    std::vector<std::string> Names;
    for (const ArenaBuffer *B : Bufs) {
      Bytes += B->Bytes;
      if (Names.size() < 4 && B->Root->producer())
        Names.push_back(fmt::format("'{}'", onnxName(*B->Root->producer())));
    }
    if (Bufs.size() > Names.size())
      Names.push_back(fmt::format("{} more", Bufs.size() - Names.size()));
    const Node *First = Bufs.front()->Root->producer();
    Out.push_back(
        {First ? onnxName(*First) : Bufs.front()->Root->name(),
         First ? First->opType() : "",
         fmt::format("{} activation buffer(s), {} bytes, did not fit arena "
                     "region {} and spilled to {} (slower): the outputs of "
                     "{}",
                     Bufs.size(), Bytes, FastRegion, Region,
                     fmt::join(Names, ", "))});
  }
}

void floatIslands(const Graph &G, std::vector<BuildWarning> &Out) {
  bool AnyInteger = false;
  for (const auto &N : G.nodes())
    AnyInteger |= computesIn(*N, isInteger);
  if (!AnyInteger)
    return;
  for (const auto &N : G.nodes())
    if (computesIn(*N, isFloat))
      Out.push_back({onnxName(*N), N->opType(),
                     fmt::format("computes in float ({} MACs) inside a model "
                                 "whose other compute nodes run in integer",
                                 N->def()->Macs(*N))});
}

/// Nodes that the pack-weights pass would have rebuilt for the target's
/// optimised kernels but left in their form (a convolution with dilations
/// or an unusual group count, a Gemm whose weights are not constant...):
/// they run on the reference kernel. Only those that matter: 1% of the
/// model's MACs or more.
void referenceKernels(const Graph &G, std::vector<BuildWarning> &Out) {
  int64_t Total = 0;
  for (const auto &N : G.nodes())
    if (N->def())
      Total += N->def()->Macs(*N);
  for (const auto &N : G.nodes()) {
    if (!N->def() || !N->def()->PackWeights)
      continue;
    int64_t Macs = N->def()->Macs(*N);
    if (Macs == 0 || Macs * 100 < Total)
      continue;
    // Packing needs the weights at compile time: a model that feeds them
    // as a graph input can be fixed by the user, a form without a packed
    // kernel cannot.
    bool ConstWeights = N->inputs().size() > 1 && N->inputs()[1] &&
                        N->inputs()[1]->isConstant();
    Out.push_back(
        {onnxName(*N), N->opType(),
         fmt::format("runs on the slow reference kernel ({} MACs, {:.0f}% of "
                     "the model): {}",
                     Macs, 100.0 * double(Macs) / double(Total),
                     ConstWeights
                         ? "its form has no optimised kernel on this target, "
                           "so the weights were not packed for one"
                         : "its weights are not constant (a graph input or "
                           "computed), so they cannot be packed at compile "
                           "time for the optimised kernel")});
  }
}

} // namespace

std::vector<BuildWarning> buildWarnings(const Graph &G, const MemoryPlan &Plan,
                                        const std::string &FastRegion,
                                        bool OptimizedKernels) {
  std::vector<BuildWarning> W;
  floatIslands(G, W);
  if (OptimizedKernels)
    referenceKernels(G, W);
  spills(Plan, FastRegion, W);
  return W;
}

} // namespace cuvil
