//===- DimRange.cpp - One object for a range of a dimension ---------------===//
#include "driver/DimRange.h"

#include "codegen/Workers.h"
#include "ir/Diagnostic.h"

#include <cstring>
#include <set>
#include <unordered_map>

namespace cuvil {

DimFormula fitFormula(const std::vector<int64_t> &Values) {
  DimFormula F;
  size_t N = Values.size();
  F.V0 = N ? Values[0] : 0;
  if (N >= 2)
    F.D1 = Values[1] - Values[0];
  if (N >= 3)
    F.D2 = Values[2] - 2 * Values[1] + Values[0];
  for (size_t K = 0; K < N; ++K)
    if (F.at(static_cast<int64_t>(K)) != Values[K]) {
      F = DimFormula();
      F.Table = Values;
      return F;
    }
  return F;
}

std::string formulaText(const DimFormula &F, const std::string &Name,
                        int64_t Lo) {
  if (!F.Table.empty())
    return fmt::format("a table over {}", Name);
  if (F.D2 != 0) // k = Name - Lo
    return fmt::format("{} + {}*k + {}*k*(k-1)/2 (k = {}-{})", F.V0, F.D1, F.D2,
                       Name, Lo);
  int64_t C1 = F.D1, C0 = F.V0 - F.D1 * Lo;
  if (C1 == 0)
    return std::to_string(C0);
  std::string T = C1 == 1    ? Name
                  : C1 == -1 ? "-" + Name
                             : fmt::format("{}*{}", C1, Name);
  if (C0 > 0)
    T += fmt::format("+{}", C0);
  else if (C0 < 0)
    T += fmt::format("-{}", -C0);
  return T;
}

namespace {

/// Reads one sample against the reference (the graph and lowering at Hi):
/// checks that it is the same code, and appends its integers in the
/// reference's order (forEachSlot's).
class SampleReader {
public:
  SampleReader(const DimRangeOption &R, const Graph &Ref,
               const GraphLowering &RefL, const MemoryPlan &Plan)
      : R(R), Ref(Ref), RefL(RefL), Plan(Plan) {
    for (const NodeLowering &NL : RefL)
      for (const KernelCall &C : NL.Calls)
        for (const KernelArg &A : C.Args)
          if (A.K == KernelArg::Kind::Tensor)
            ReadByKernels.insert(A.V);
  }

  llvm::Error read(const Graph &G, const GraphLowering &L, int64_t At,
                   std::vector<int64_t> &Out) const;

private:
  /// "--dim seq=1..64: at seq=5, "
  std::string where(int64_t At) const {
    return fmt::format("--dim {}={}..{}: at {}={}, ", R.Name, R.Lo, R.Hi,
                       R.Name, At);
  }
  std::string atHi() const { return fmt::format("at {}={}", R.Name, R.Hi); }
  llvm::Error differs(const Node &N, int64_t At,
                      const std::string &What) const {
    return nodeError(N,
                     "{}{} ({}): the code is not the same over the range; "
                     "give a narrower range, or build one object per value",
                     where(At), What, atHi());
  }
  llvm::Error readCalls(const Node &N, const std::vector<KernelCall> &A,
                        const std::vector<KernelCall> &B, int64_t At,
                        std::vector<int64_t> &Out) const;

  const DimRangeOption &R;
  const Graph &Ref;
  const GraphLowering &RefL;
  const MemoryPlan &Plan;
  /// The reference's values that a kernel reads through a pointer.
  std::set<const Value *> ReadByKernels;
};

llvm::Error SampleReader::readCalls(const Node &N,
                                    const std::vector<KernelCall> &A,
                                    const std::vector<KernelCall> &B,
                                    int64_t At,
                                    std::vector<int64_t> &Out) const {
  using Kind = KernelArg::Kind;
  if (A.size() != B.size())
    return differs(
        N, At,
        fmt::format("it makes {} kernel calls, not {}", B.size(), A.size()));
  for (size_t C = 0; C < A.size(); ++C) {
    const KernelCall &X = A[C], &Y = B[C];
    if (X.Kernel != Y.Kernel || X.IsCopy != Y.IsCopy ||
        X.Args.size() != Y.Args.size())
      return differs(N, At,
                     fmt::format("its call {} is of kernel {}, not {}", C,
                                 Y.Kernel, X.Kernel));
    for (size_t I = 0; I < X.Args.size(); ++I) {
      const KernelArg &P = X.Args[I], &Q = Y.Args[I];
      bool Same = P.K == Q.K;
      if (Same && P.K == Kind::Tensor)
        Same = P.V->name() == Q.V->name();
      if (Same && P.K == Kind::Float)
        Same = std::memcmp(&P.F, &Q.F, sizeof P.F) == 0;
      if (Same && P.K == Kind::IntArray)
        Same = P.Array.size() == Q.Array.size();
      if (!Same)
        return differs(
            N, At,
            fmt::format("argument {} of its call of {} differs", I, X.Kernel));
      if (Q.K == Kind::Tensor)
        Out.push_back(Q.ByteOffset);
      else if (Q.K == Kind::Int)
        Out.push_back(Q.I);
      else if (Q.K == Kind::IntArray)
        Out.insert(Out.end(), Q.Array.begin(), Q.Array.end());
    }
  }
  return llvm::Error::success();
}

llvm::Error SampleReader::read(const Graph &G, const GraphLowering &L,
                               int64_t At, std::vector<int64_t> &Out) const {
  std::unordered_map<std::string, size_t> NodeAt;
  for (size_t I = 0; I < G.nodes().size(); ++I)
    NodeAt.emplace(G.nodes()[I]->name(), I);
  std::unordered_map<std::string, const Value *> ValueAt;
  for (const auto &V : G.values())
    ValueAt.emplace(V->name(), V.get());
  auto Find = [&](const Value *V) -> const Value * {
    auto It = ValueAt.find(V->name());
    return It == ValueAt.end() ? nullptr : It->second;
  };

  std::unordered_map<std::string, size_t> RefNodes;
  for (size_t I = 0; I < Ref.nodes().size(); ++I)
    RefNodes.emplace(Ref.nodes()[I]->name(), I);
  for (const auto &N : G.nodes())
    if (!RefNodes.count(N->name()))
      return nodeError(
          *N,
          "{}the graph has this node, which the graph {} lacks: the "
          "code is not the same over the range; give a "
          "narrower range, or build one object per value",
          where(At), atHi());
  for (size_t I = 0; I < Ref.nodes().size(); ++I) {
    const Node &N = *Ref.nodes()[I];
    auto It = NodeAt.find(N.name());
    if (It == NodeAt.end())
      return differs(N, At, "the graph lacks this node");
    const NodeLowering &A = RefL[I], &B = L[It->second];
    if (!A.Shares.empty() || !B.Shares.empty())
      return differs(N, At, "it is cut into shares for several cores");
    bool SameCond =
        A.HasCode == B.HasCode && A.RunsWhen.size() == B.RunsWhen.size();
    for (size_t C = 0; SameCond && C < A.RunsWhen.size(); ++C)
      SameCond = A.RunsWhen[C].When == B.RunsWhen[C].When &&
                 A.RunsWhen[C].Cond->name() == B.RunsWhen[C].Cond->name();
    if (!SameCond)
      return differs(N, At, "it runs under other conditions");
    if (auto E = readCalls(N, A.Calls, B.Calls, At, Out))
      return E;
  }

  // The graph's inputs and outputs: each dimension, and the byte size.
  auto Ends = [&](const char *Kind, const std::vector<Value *> &Mine,
                  const std::vector<Value *> &Theirs) -> llvm::Error {
    if (Mine.size() != Theirs.size())
      return makeError("{}the graph has {} {}s, not {}", where(At),
                       Theirs.size(), Kind, Mine.size());
    for (size_t I = 0; I < Mine.size(); ++I) {
      if (Mine[I]->name() != Theirs[I]->name() ||
          Mine[I]->rank() != Theirs[I]->rank() ||
          Mine[I]->dtype() != Theirs[I]->dtype())
        return makeError("{}{} {} is '{}' of another rank or type than {}",
                         where(At), Kind, I, Theirs[I]->name(), atHi());
      Out.insert(Out.end(), Theirs[I]->shape().begin(),
                 Theirs[I]->shape().end());
      Out.push_back(Theirs[I]->byteSize());
    }
    return llvm::Error::success();
  };
  if (auto E = Ends("input", Ref.inputs(), G.inputs()))
    return E;
  if (auto E = Ends("output", Ref.outputs(), G.outputs()))
    return E;
  for (const auto &[I, V] : Plan.OutputCopies) {
    const Value *Mine = Find(V);
    if (!Mine)
      return makeError("{}the graph lacks tensor '{}', which output {} is "
                       "copied from",
                       where(At), V->name(), I);
    Out.push_back(Mine->byteSize());
  }

  // The plan made at Hi must hold every tensor, and a buffer's values must
  // keep one size (an in-place kernel reads what it overwrites).
  for (const ArenaBuffer &Buf : Plan.Buffers) {
    const Value *Root = Find(Buf.Root);
    for (const Value *V : Buf.Values) {
      const Value *Mine = Find(V);
      if (!Mine)
        continue;
      if (Mine->byteSize() > V->byteSize())
        return makeError("{}tensor '{}' needs {} bytes, more than the {} "
                         "planned {}: its size does not grow with '{}'",
                         where(At), V->name(), Mine->byteSize(), V->byteSize(),
                         atHi(), R.Name);
      if (V != Buf.Root && V->byteSize() == Buf.Root->byteSize() &&
          (!Root || Mine->byteSize() != Root->byteSize()))
        return makeError("{}tensor '{}' shares the buffer of '{}' {}, but "
                         "not its size",
                         where(At), V->name(), Buf.Root->name(), atHi());
    }
  }
  // Constants: the same bytes, or their beginning (a table sliced to the
  // length reads its first rows).
  for (const Value *W : Plan.Weights) {
    const Value *Mine = Find(W);
    // Only what kernels read: the rest (a Reshape's target shape) the
    // compiler read itself, and the arguments above are what came of it.
    if (!Mine || !Mine->isConstant() || !ReadByKernels.count(W))
      continue;
    const std::vector<uint8_t> &X = W->data(), &Y = Mine->data();
    if (Y.size() > X.size() || !std::equal(Y.begin(), Y.end(), X.begin()))
      return makeError("{}constant '{}' holds other values than {}: constants "
                       "computed from '{}' must be the beginning of their "
                       "value at {} (a table sliced to the length)",
                       where(At), W->name(), atHi(), R.Name, R.Hi);
  }
  return llvm::Error::success();
}

/// Calls Fn(slot count, arg) for each kernel argument of L that holds
/// integers, in SampleReader's order; returns the number of slots used.
template <typename FnT> size_t forEachArg(GraphLowering &L, FnT Fn) {
  size_t Slot = 0;
  for (NodeLowering &NL : L)
    for (KernelCall &C : NL.Calls)
      for (KernelArg &A : C.Args) {
        size_t N =
            A.K == KernelArg::Kind::IntArray ? A.Array.size()
            : A.K == KernelArg::Kind::Tensor || A.K == KernelArg::Kind::Int ? 1
                                                                            : 0;
        if (N)
          Fn(Slot, N, A);
        Slot += N;
      }
  return Slot;
}

} // namespace

llvm::Expected<DimRangeCode>
fitDimRange(const DimRangeOption &R, const SampleFn &Sample, const Graph &G,
            GraphLowering &L, const MemoryPlan &Plan, unsigned Jobs) {
  SampleReader Reader(R, G, L, Plan);
  size_t Count = static_cast<size_t>(R.Hi - R.Lo + 1);
  // Per value of the range (k = value - Lo): its integers, or its error.
  std::vector<std::vector<int64_t>> Ints(Count);
  std::vector<std::string> Errors(Count);
  if (auto E = Reader.read(G, L, R.Hi, Ints[Count - 1]))
    return E;
  auto Take = [&](uint32_t K) {
    int64_t At = R.Lo + K;
    auto S = Sample(At);
    if (!S) { // the model itself fails at this value
      Errors[K] = fmt::format("--dim {}={}..{}: at {}={}: {}", R.Name, R.Lo,
                              R.Hi, R.Name, At, llvm::toString(S.takeError()));
      return;
    }
    if (auto E = Reader.read(*S->G, S->L, At, Ints[K]))
      Errors[K] = llvm::toString(std::move(E));
  };
  // Results travel as 'E' + message or 'I' + the integers.
  auto InWorker = [&](uint32_t K) {
    Take(K);
    if (!Errors[K].empty())
      return "E" + Errors[K];
    std::string Bytes = "I";
    Bytes.append(reinterpret_cast<const char *>(Ints[K].data()),
                 Ints[K].size() * sizeof(int64_t));
    return Bytes;
  };
  auto Receive = [&](uint32_t K, llvm::StringRef Bytes) -> llvm::Error {
    if (Bytes.starts_with("E")) {
      Errors[K] = Bytes.drop_front().str();
    } else {
      Ints[K].resize((Bytes.size() - 1) / sizeof(int64_t));
      std::memcpy(Ints[K].data(), Bytes.data() + 1,
                  Ints[K].size() * sizeof(int64_t));
    }
    return llvm::Error::success();
  };
  std::vector<uint32_t> Order;
  for (uint32_t K = 0; K + 1 < Count; ++K)
    Order.push_back(K);
  if (auto E = runTasks(Jobs ? Jobs : defaultOptimizeJobs(), Order,
                        {Take, InWorker, Receive}))
    return E;
  for (size_t K = 0; K < Count; ++K) // the smallest value that fails
    if (!Errors[K].empty())
      return makeError("{}", Errors[K]);

  size_t Slots = Ints.back().size();
  auto Formula = [&](size_t Slot) {
    std::vector<int64_t> Values(Count);
    for (size_t K = 0; K < Count; ++K)
      Values[K] = Ints[K][Slot];
    return fitFormula(Values);
  };
  auto Varies = [&](size_t Slot) {
    for (size_t K = 0; K < Count; ++K)
      if (Ints[K][Slot] != Ints.back()[Slot])
        return true;
    return false;
  };
  size_t ArgSlots = forEachArg(L, [&](size_t First, size_t N, KernelArg &A) {
    bool Any = false;
    for (size_t S = First; S < First + N; ++S)
      Any |= Varies(S);
    if (!Any)
      return;
    for (size_t S = First; S < First + N; ++S)
      A.Dyn.push_back(Formula(S));
  });

  DimRangeCode Code;
  Code.Name = R.Name;
  Code.Lo = R.Lo;
  Code.Hi = R.Hi;
  size_t Slot = ArgSlots;
  auto Ends = [&](const std::vector<Value *> &Vs,
                  std::vector<std::vector<DimFormula>> &Shapes,
                  std::vector<DimFormula> &Bytes) {
    for (const Value *V : Vs) {
      Shapes.emplace_back();
      for (size_t D = 0; D < V->shape().size(); ++D)
        Shapes.back().push_back(Formula(Slot++));
      Bytes.push_back(Formula(Slot++));
    }
  };
  Ends(G.inputs(), Code.InputShapes, Code.InputBytes);
  Ends(G.outputs(), Code.OutputShapes, Code.OutputBytes);
  for (size_t C = 0; C < Plan.OutputCopies.size(); ++C)
    Code.CopyBytes.push_back(Formula(Slot++));
  if (Slot != Slots)
    return makeError("internal error: the range's samples hold {} integers, "
                     "the lowering {}",
                     Slots, Slot);
  return Code;
}

} // namespace cuvil
