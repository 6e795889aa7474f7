//===- PlannerPropertyTest.cpp - The memory planner on random graphs ------===//
//
// Thousands of random DAGs (element-wise ops that may run in place, ops that
// need a fresh buffer, Concat, views, Gemm; one or two graph inputs, several
// graph outputs, values read by many nodes, sizes that are not multiples of
// the alignment; alignments 16, 64 and 128; one region, or two with and
// without spilling) are planned with planMemory, and every plan is checked
// against the rules generated code relies on:
//   (a) the schedule runs every node once, in a topological order;
//   (b) buffers of one arena whose live ranges overlap have disjoint bytes;
//   (c) offsets and sizes of buffers, weights and arenas are multiples of
//       the alignment;
//   (d) every arena fits its region and is at least its lower bound, and
//       the lower bounds are what the buffers' live ranges give;
//   (e) a node's output shares bytes with one of its inputs only where that
//       is legal: views; in-place ops whose input 0 dies there; Concat
//       inputs computed in their slice of the output;
//   (f) every value a node reads or writes lies in a buffer live at that
//       step, or in an input, output or weight base;
//   (g) values live at the same step share bytes only if they are aliases;
//   (h) running the schedule on a model of memory, every node reads what
//       its inputs' producers wrote, and every graph output ends up in the
//       caller's buffer.
// The planner's quality goals are in PlannerQualityTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "PlanChecker.h"

using namespace cuvil;
using namespace cuvil::plantest;

namespace {

//===----------------------------------------------------------------------===//
// Random graphs
//===----------------------------------------------------------------------===//

/// A random graph and the options to plan it with.
struct Case {
  std::unique_ptr<Graph> G;
  std::vector<MemoryRegion> Regions; ///< Opts.Regions point into it.
  PlanOptions Opts;
};

/// Builds random graphs over [1, C] tensors. Every op reads mostly the
/// newest value (long chains) and sometimes an older one (values with many
/// readers and long lifetimes).
class GraphGenerator {
public:
  GraphGenerator(Graph &G, Random &R) : G(G), R(R) {}

  void build() {
    for (unsigned I = 0, E = R.between(1, 2); I < E; ++I) {
      Value *X = G.addValue("x" + std::to_string(I), DType::F32,
                            {1, R.between(1, 80)}, ValueKind::Input);
      G.inputs().push_back(X);
      Pool.push_back(X);
    }
    for (unsigned I = 0, E = R.between(2, 24); I < E; ++I)
      addNode(I);
    // Every value nobody reads is a graph output (as after dead-code
    // removal); a few others too, graph inputs included.
    for (Value *V : Pool) {
      bool Sink = V->kind() == ValueKind::Intermediate && V->users().empty();
      if (Sink || R.chance(8))
        G.outputs().push_back(V);
    }
  }

private:
  Value *operand() { return R.chance(55) ? Pool.back() : R.pick(Pool); }

  Value *result(const std::string &Name, int64_t Width) {
    Value *Y = tensor(G, Name, {1, Width});
    Pool.push_back(Y);
    return Y;
  }

  void addNode(int Index) {
    // "Branches": several ops on one value, concatenated (fire and
    // inception modules).
    static const std::vector<std::pair<const char *, unsigned>> Ops = {
        {"Relu", 3},    {"Sigmoid", 2}, {"Softmax", 2},  {"Add", 3},
        {"Concat", 2},  {"Gemm", 2},    {"Branches", 1}, {"Reshape", 1},
        {"Flatten", 1}, {"Identity", 1}};
    unsigned Total = 0;
    for (const auto &Op : Ops)
      Total += Op.second;
    unsigned Ticket = R.below(Total);
    std::string Op;
    for (const auto &[Name, Weight] : Ops) {
      if (Ticket < Weight) {
        Op = Name;
        break;
      }
      Ticket -= Weight;
    }

    std::string Name = "n" + std::to_string(Index);
    std::string Out = "v" + std::to_string(Index);
    Value *X = operand();
    int64_t Width = X->shape()[1];
    if (Op == "Add") {
      // Another value of X's shape, maybe X itself, else a constant; in
      // either operand position.
      std::vector<Value *> Same;
      for (Value *V : Pool)
        if (V->shape() == X->shape())
          Same.push_back(V);
      Value *B =
          R.chance(75) ? R.pick(Same) : constant(G, Name + ".b", X->shape());
      if (R.chance(30))
        std::swap(X, B);
      addOp(G, Op, Name, {X, B}, {result(Out, Width)}, Index);
    } else if (Op == "Concat") {
      std::vector<Value *> Ins = {X};
      for (unsigned I = 0, E = R.between(1, 3); I < E; ++I)
        Ins.push_back(operand());
      concat(Name, Out, Ins, Index);
    } else if (Op == "Branches") {
      // Branches that only the concat reads, as in a fire module; 32 or 64
      // floats wide, so that every slice stays aligned (the planner computes
      // such inputs in their slices), and the concat takes them all.
      std::vector<Value *> Ins;
      for (unsigned I = 0, E = R.between(2, 4); I < E; ++I)
        Ins.push_back(gemm(X, Name + "b" + std::to_string(I),
                           Out + "b" + std::to_string(I), 32 * R.between(1, 2),
                           Index));
      Pool.resize(Pool.size() - Ins.size());
      concat(Name, Out, Ins, Index);
    } else if (Op == "Gemm") {
      gemm(X, Name, Out, R.between(1, 80), Index);
    } else if (Op == "Reshape") {
      addOp(G, Op, Name, {X, shapeConstant(G, Name + ".shape", {1, Width})},
            {result(Out, Width)}, Index);
    } else {
      Node *N = addOp(G, Op, Name, {X}, {result(Out, Width)}, Index);
      if (Op == "Flatten" || Op == "Softmax")
        N->setAttr("axis", int64_t(1));
    }
  }

  Value *gemm(Value *X, const std::string &Name, const std::string &Out,
              int64_t N, int Index) {
    std::vector<Value *> Ins = {X,
                                constant(G, Name + ".w", {X->shape()[1], N})};
    if (R.chance(50))
      Ins.push_back(constant(G, Name + ".bias", {N}));
    Value *Y = result(Out, N);
    addOp(G, "Gemm", Name, Ins, {Y}, Index);
    return Y;
  }

  /// Concatenates Ins along axis 1: the first, and the next ones while the
  /// result stays within 512 elements (concats of concats stay small).
  void concat(const std::string &Name, const std::string &Out,
              const std::vector<Value *> &Ins, int Index) {
    std::vector<Value *> Taken = {Ins[0]};
    int64_t Width = Ins[0]->shape()[1];
    for (size_t I = 1; I < Ins.size() && Width + Ins[I]->shape()[1] <= 512;
         ++I) {
      Taken.push_back(Ins[I]);
      Width += Ins[I]->shape()[1];
    }
    Node *N = addOp(G, "Concat", Name, Taken, {result(Out, Width)}, Index);
    N->setAttr("axis", int64_t(1));
  }

  Graph &G;
  Random &R;
  std::vector<Value *> Pool; ///< Values later nodes may read.
};

Case randomCase(uint64_t Seed) {
  Random R(Seed);
  Case C;
  C.G = std::make_unique<Graph>("random" + std::to_string(Seed));
  GraphGenerator(*C.G, R).build();

  static const std::array<int64_t, 3> Alignments = {16, 64, 128};
  C.Opts.Alignment = Alignments[R.below(Alignments.size())];
  C.Opts.OptimizeSchedule = !R.chance(20);
  // Either one ample region, or a small, maybe banked, one first: the plan
  // then moves to the second region or, when allowed, spills into it.
  if (R.chance(40)) {
    C.Regions = {region("RAM", 1u << 30)};
  } else {
    int64_t Everything = 0; // the most any plan needs
    for (const auto &V : C.G->values())
      if (V->kind() == ValueKind::Intermediate)
        Everything += alignUp(V->byteSize(), C.Opts.Alignment);
    MemoryRegion Fast =
        region("FAST", alignUp(R.below(Everything + 1), C.Opts.Alignment));
    // Banks as hardware has them: contiguous ones of a power-of-two size,
    // or interleaved every power-of-two number of bytes (down to a word).
    if (R.chance(50)) {
      Fast.Banks = R.between(2, 4);
      if (R.chance(50))
        Fast.BankInterleave = int64_t(1) << R.between(2, 8);
      else
        Fast.BankSize = int64_t(1) << R.between(6, 12);
    }
    C.Regions = {Fast, region("SLOW", 1u << 30)};
    C.Opts.AllowSpill = R.chance(50);
  }
  for (const MemoryRegion &Reg : C.Regions)
    C.Opts.Regions.push_back(&Reg);
  return C;
}

} // namespace

TEST(PlannerProperty, RandomGraphsGetCorrectPlans) {
  constexpr uint64_t FirstSeed = 0x5eed0000;
  constexpr unsigned Cases = 3000;
  for (unsigned I = 0; I < Cases; ++I) {
    Case C = randomCase(FirstSeed + I);
    if (!planAndCheck(*C.G, C.Opts))
      return; // one case's report is enough; its name gives the seed
  }
}
