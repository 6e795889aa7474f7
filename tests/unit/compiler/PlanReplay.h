//===- PlanReplay.h - Byte-level replay of a memory plan --------*- C++ -*-===//
//
// Rule (h) of the planner's property test: run the schedule on memory that
// holds, per byte, a tag naming which byte of which computed value it
// holds, and check that every read finds the bytes its value should have.
// Views hold their input's bytes, a Concat (of [1, C] tensors along axis 1,
// all the random generator makes) its inputs' bytes in order. This catches
// any overlap, early reuse or misplaced in-place result the structural
// checks of PlanChecker.h miss.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TESTS_UNIT_PLANREPLAY_H
#define CUVIL_TESTS_UNIT_PLANREPLAY_H

#include "ops/OpRegistry.h"
#include "planner/MemoryPlan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace cuvil::plantest {

inline std::string str(const Location &L) {
  static const char *const Bases[] = {"arena", "weights", "input", "output"};
  return fmt::format("{} {} +{}", Bases[static_cast<unsigned>(L.B)], L.Index,
                     L.Offset);
}

/// Replays a plan; what goes wrong is appended to Problems.
class DataflowReplay {
public:
  DataflowReplay(const Graph &G, const MemoryPlan &P,
                 std::vector<std::string> &Problems)
      : G(G), P(P), Problems(Problems), N(G.nodes().size()) {}

  /// Runs the schedule over tagged memory.
  void run() {
    for (unsigned A = 0; A < P.Arenas.size(); ++A)
      Mem[{Base::Arena, A}].assign(P.Arenas[A].Size, 0);
    for (unsigned I = 0; I < G.outputs().size(); ++I)
      Mem[{Base::Output, I}].assign(G.outputs()[I]->byteSize(), 0);
    for (unsigned I = 0; I < G.inputs().size(); ++I)
      Mem[{Base::Input, I}] = expected(G.inputs()[I]);
    Mem[{Base::Weights, 0}].assign(P.WeightsSize, 0);
    for (const Value *W : P.Weights)
      write(loc(W), W, "weight '" + W->name() + "'");

    for (unsigned S = 0; S < N; ++S) {
      const Node &Nd = *G.nodes()[S];
      std::string Reader = fmt::format("step {}: node '{}'", S, Nd.name());
      for (const Value *X : Nd.inputs())
        if (X && !holds(loc(X), X, Reader))
          return;
      const Value *Y = Nd.output(0);
      if (Nd.def()->place() != Placement::View)
        write(loc(Y), Y, "'" + Y->name() + "'");
    }
    for (const auto &[I, V] : P.OutputCopies) {
      if (!holds(loc(V), V, fmt::format("the copy into output {}", I)))
        return;
      write({Base::Output, I, 0}, V, fmt::format("output {}", I));
    }
    for (unsigned I = 0; I < G.outputs().size(); ++I)
      holds({Base::Output, I, 0}, G.outputs()[I], "after the run, the caller");
  }

private:
  using Tags = std::vector<uint64_t>;
  using Memory = std::map<std::pair<Base, unsigned>, Tags>;
  static uint64_t tag(const Value *V, int64_t Byte) {
    return (uint64_t(V->id()) + 1) << 32 | uint64_t(Byte);
  }
  std::string describeTag(uint64_t T) const {
    if (T == 0)
      return "nothing (never written)";
    unsigned Id = static_cast<unsigned>(T >> 32) - 1;
    for (const auto &V : G.values())
      if (V->id() == Id)
        return fmt::format("byte {} of '{}'", T & 0xffffffffu, V->name());
    return "an unknown tag";
  }
  const Tags &expected(const Value *V) {
    auto It = Expected.find(V);
    if (It != Expected.end())
      return It->second;
    Tags T;
    const Node *Nd = V->producer();
    if (Nd && Nd->def()->place() == Placement::View) {
      T = expected(Nd->input(0));
    } else if (Nd && Nd->opType() == "Concat") {
      for (const Value *In : Nd->inputs()) {
        const Tags &Part = expected(In);
        T.insert(T.end(), Part.begin(), Part.end());
      }
    } else {
      for (int64_t B = 0; B < V->byteSize(); ++B)
        T.push_back(tag(V, B));
    }
    return Expected[V] = std::move(T);
  }

  /// The bytes of base L (of Bytes bytes from L.Offset), or null (and a
  /// problem) if they are outside it.
  uint64_t *bytes(const Location &L, int64_t Bytes, const std::string &What) {
    auto It = Mem.find({L.B, L.Index});
    if (It == Mem.end() || L.Offset < 0 ||
        L.Offset + Bytes > static_cast<int64_t>(It->second.size())) {
      problem("(h) {} at {} ({} bytes) is outside its base", What, str(L),
              Bytes);
      return nullptr;
    }
    return It->second.data() + L.Offset;
  }

  /// Whether memory holds V's bytes at L; a problem if not.
  bool holds(const Location &L, const Value *V, const std::string &Reader) {
    const Tags &Want = expected(V);
    const uint64_t *Got = bytes(L, Want.size(), "'" + V->name() + "'");
    if (!Got)
      return false;
    for (size_t B = 0; B < Want.size(); ++B)
      if (Got[B] != Want[B]) {
        problem("(h) {} reads '{}' from {}, but byte {} there holds {}, not "
                "{}",
                Reader, V->name(), str(L), B, describeTag(Got[B]),
                describeTag(Want[B]));
        return false;
      }
    return true;
  }

  void write(const Location &L, const Value *V, const std::string &What) {
    const Tags &T = expected(V);
    if (uint64_t *At = bytes(L, T.size(), What))
      std::copy(T.begin(), T.end(), At);
  }

  template <typename... Args>
  void problem(fmt::format_string<Args...> Fmt, Args &&...A) {
    Problems.push_back(fmt::format(Fmt, std::forward<Args>(A)...));
  }
  const Location &loc(const Value *V) const { return P.at(V); }

  const Graph &G;
  const MemoryPlan &P;
  std::vector<std::string> &Problems;
  const unsigned N; ///< Number of steps.
  std::map<const Value *, Tags> Expected;
  Memory Mem;
};

} // namespace cuvil::plantest

#endif
