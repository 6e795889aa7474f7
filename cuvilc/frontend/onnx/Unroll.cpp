//===- Unroll.cpp - Scan and Loop as straight-line ONNX nodes -------------===//
//
// A Scan whose trip count is static (the scan axis of its inputs after
// shape inference) is rewritten, in the ModelProto, into plain ONNX nodes:
// per iteration a copy of the body with its values renamed, its scan inputs
// bound to Gather(x, t) slices and its state inputs to the previous
// iteration's state; the scan outputs are stacked with Unsqueeze + Concat
// and Identity nodes produce the Scan's own output names. Shape inference
// then runs again over the result and the importer sees only ops it knows.
// Scan-8's batch axis is one more loop around that. A Scan this does not
// handle (sequence_lens, unknown shapes, nested subgraphs, too many
// iterations) stays as is, and verification reports it.
//
// A Loop is unrolled the same way, or into guarded iterations when it may
// stop early: UnrollLoop.cpp. What both share (fresh names, body copies)
// is UnrollBody.cpp.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Unroll.h"
#include "frontend/onnx/UnrollBody.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace cuvil {
namespace {

using unroll::BodyUnroller;
using unroll::MaxCopies;

class ScanUnroller : public BodyUnroller {
public:
  ScanUnroller(onnx::GraphProto &G, const onnx::NodeProto &Scan, int Index,
               int64_t Opset, std::vector<onnx::NodeProto> &Out)
      : BodyUnroller(G, Scan, Index, Opset, Out), Scan(Scan) {}

  /// False if this Scan is not one the unroller handles (nothing emitted;
  /// why() says why).
  bool run();

private:
  /// One Scan-9 pass: returns the final states then the scan outputs.
  std::vector<std::string> scan(std::vector<std::string> States,
                                const std::vector<std::string> &Xs,
                                int64_t Batch);

  const onnx::NodeProto &Scan;
  const onnx::GraphProto *Body = nullptr;
  std::vector<int64_t> InAxes, InDirs, OutAxes, OutDirs;
  int64_t Steps = 0;
};

std::vector<std::string> ScanUnroller::scan(std::vector<std::string> States,
                                            const std::vector<std::string> &Xs,
                                            int64_t Batch) {
  size_t NumStates = States.size();
  size_t NumScanOuts = Body->output_size() - NumStates;
  std::vector<std::vector<std::string>> PerStep(NumScanOuts);
  for (int64_t Step = 0; Step < Steps; ++Step) {
    std::map<std::string, std::string> Names; // body name -> unrolled name
    for (size_t I = 0; I < NumStates; ++I)
      Names[Body->input(I).name()] = States[I];
    for (size_t I = 0; I < Xs.size(); ++I) {
      int64_t T = InDirs[I] ? Steps - 1 - Step : Step;
      // Scan-8 already took the batch axis away.
      Names[Body->input(NumStates + I).name()] =
          gather(Xs[I], T, Batch >= 0 ? 0 : InAxes[I]);
    }
    copyBody(*Body, Names);
    for (size_t I = 0; I < NumStates; ++I)
      States[I] = bound(Names, Body->output(I).name());
    for (size_t I = 0; I < NumScanOuts; ++I)
      PerStep[I].push_back(bound(Names, Body->output(NumStates + I).name()));
  }
  std::vector<std::string> Results = States;
  for (size_t I = 0; I < NumScanOuts; ++I) {
    if (OutDirs[I])
      std::reverse(PerStep[I].begin(), PerStep[I].end());
    Results.push_back(stack(PerStep[I], Batch >= 0 ? 0 : OutAxes[I]));
  }
  return Results;
}

bool ScanUnroller::run() {
  int64_t NumScanIns = -1;
  for (const auto &A : Scan.attribute()) {
    if (A.name() == "body")
      Body = &A.g();
    else if (A.name() == "num_scan_inputs")
      NumScanIns = A.i();
    else if (A.name() == "scan_input_axes")
      InAxes.assign(A.ints().begin(), A.ints().end());
    else if (A.name() == "scan_input_directions" || A.name() == "directions")
      InDirs.assign(A.ints().begin(), A.ints().end());
    else if (A.name() == "scan_output_axes")
      OutAxes.assign(A.ints().begin(), A.ints().end());
    else if (A.name() == "scan_output_directions")
      OutDirs.assign(A.ints().begin(), A.ints().end());
  }
  bool Batched = Opset < 9; // Scan-8: inputs start with sequence_lens
  std::vector<std::string> Ins(Scan.input().begin(), Scan.input().end());
  if (!Body || NumScanIns < 1 || Ins.empty())
    return decline("it has no body or no scan input");
  if (Batched) {
    if (!Ins[0].empty())
      return decline("the sequence_lens input is not supported");
    Ins.erase(Ins.begin());
  }
  int64_t NumStates = static_cast<int64_t>(Ins.size()) - NumScanIns;
  int64_t NumScanOuts = Body->output_size() - NumStates;
  if (NumStates < 0 || NumScanOuts < 0 ||
      Body->input_size() != static_cast<int>(Ins.size()) ||
      Scan.output_size() != Body->output_size())
    return decline("its inputs and outputs do not match its body's");
  if (!checkBody(*Body))
    return false;
  InAxes.resize(NumScanIns, 0);
  InDirs.resize(NumScanIns, 0);
  OutAxes.resize(NumScanOuts, 0);
  OutDirs.resize(NumScanOuts, 0);
  // Static trip count (and batch), from the first scan input's shape.
  const onnx::TypeProto *T = typeOf(Ins[NumStates]);
  if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape())
    return decline("the shape of its scan input is unknown");
  const auto &Shape = T->tensor_type().shape();
  int64_t Rank = Shape.dim_size();
  // Negative axes count from the end of that input / of the stacked output.
  auto RankOf = [](const onnx::TypeProto *Ty) -> int64_t {
    return Ty && Ty->has_tensor_type() && Ty->tensor_type().has_shape()
               ? Ty->tensor_type().shape().dim_size()
               : -1;
  };
  for (int64_t I = 0; I < NumScanIns; ++I)
    if (InAxes[I] < 0)
      InAxes[I] += RankOf(typeOf(Ins[NumStates + I]));
  for (int64_t I = 0; I < NumScanOuts; ++I)
    if (OutAxes[I] < 0)
      OutAxes[I] += RankOf(&Body->output(NumStates + I).type()) + 1;
  for (int64_t Ax : InAxes)
    if (Ax < 0)
      return decline("a negative scan input axis of unknown rank");
  for (int64_t Ax : OutAxes)
    if (Ax < 0)
      return decline("a negative scan output axis of unknown rank");
  int64_t ScanAxis = Batched ? 1 : InAxes[0];
  if (ScanAxis < 0 || ScanAxis >= Rank ||
      !Shape.dim(ScanAxis).has_dim_value() ||
      (Batched && !Shape.dim(0).has_dim_value()))
    return decline("its trip count is not static");
  Steps = Shape.dim(ScanAxis).dim_value();
  int64_t BatchSize = Batched ? Shape.dim(0).dim_value() : 1;
  if (Steps < 1 || BatchSize < 1 ||
      Steps * BatchSize * (Body->node_size() + 4) > MaxCopies)
    return decline("unrolling it would take more than " +
                   std::to_string(MaxCopies) +
                   " nodes; that is not "
                   "supported");

  std::vector<std::string> States(Ins.begin(), Ins.begin() + NumStates);
  std::vector<std::string> Xs(Ins.begin() + NumStates, Ins.end());
  std::vector<std::string> Results;
  if (!Batched) {
    Results = scan(States, Xs, -1);
  } else {
    std::vector<std::vector<std::string>> PerBatch(Scan.output_size());
    for (int64_t B = 0; B < BatchSize; ++B) {
      std::vector<std::string> S, X;
      for (const auto &V : States)
        S.push_back(gather(V, B, 0));
      for (const auto &V : Xs)
        X.push_back(gather(V, B, 0));
      auto R = scan(S, X, B);
      for (size_t I = 0; I < R.size(); ++I)
        PerBatch[I].push_back(R[I]);
    }
    for (const auto &Parts : PerBatch)
      Results.push_back(stack(Parts, 0));
  }
  nameOutputs(Scan, Results);
  return true;
}

} // namespace

bool unrollLoops(onnx::ModelProto &M,
                 std::map<std::string, std::string> &Declined,
                 const std::map<std::string, int64_t> &Known,
                 const std::map<std::string, int64_t> &Bounds,
                 std::vector<LoopBoundCheck> &Checks) {
  int64_t Opset = 0;
  for (const auto &O : M.opset_import())
    if (O.domain().empty() || O.domain() == "ai.onnx")
      Opset = O.version();
  onnx::GraphProto &G = *M.mutable_graph();
  bool Changed = false;
  std::vector<onnx::NodeProto> Nodes;
  int Index = 0;
  for (const auto &N : G.node()) {
    ++Index;
    bool Standard = N.domain().empty() || N.domain() == "ai.onnx";
    if (!Standard || (N.op_type() != "Scan" && N.op_type() != "Loop")) {
      Nodes.push_back(N);
      continue;
    }
    std::vector<onnx::NodeProto> Unrolled;
    bool Done;
    std::string Why;
    if (N.op_type() == "Scan") {
      ScanUnroller U(G, N, Index - 1, Opset, Unrolled);
      Done = U.run();
      Why = U.why();
    } else {
      std::optional<int64_t> Bound;
      if (auto It = Bounds.find(N.name()); It != Bounds.end())
        Bound = It->second;
      std::optional<LoopBoundCheck> Check;
      Done = unroll::unrollLoop(G, N, Index - 1, Opset, Unrolled, Known, Bound,
                                Check, Why);
      if (Done && Check)
        Checks.push_back(std::move(*Check));
    }
    if (!Done) {
      if (N.output_size() > 0)
        Declined[N.output(0)] = Why;
      Nodes.push_back(N);
      continue;
    }
    Nodes.insert(Nodes.end(), Unrolled.begin(), Unrolled.end());
    Changed = true;
  }
  if (!Changed)
    return false;
  G.clear_node();
  for (auto &N : Nodes)
    *G.add_node() = std::move(N);
  return true;
}

} // namespace cuvil
