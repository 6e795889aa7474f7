//===- GraphCheck.cpp - Precise messages before the ONNX checker ----------===//
//
// The ONNX checker reports a missing initializer, an input nothing
// produces and a cycle all as "must be topologically sorted", without the
// tensor or the nodes. These checks run first and name them. Outputs
// written without a shape (newer exporters) get it from shape inference,
// since the checker requires one on the main graph's outputs.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphCheck.h"
#include "frontend/onnx/OnnxWalk.h"

#include "ir/Diagnostic.h"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace cuvil {

namespace {

std::string nodeName(const onnx::NodeProto &N, size_t Index) {
  return N.name().empty() ? N.op_type() + "_" + std::to_string(Index)
                          : N.name();
}

std::string describe(const onnx::NodeProto &N, size_t Index) {
  return fmt::format("node '{}' ({})", nodeName(N, Index), N.op_type());
}

/// One cycle among the nodes Kahn's algorithm could not order (each has a
/// producer among them), as consumer, input, producer, input, ... back to
/// the first; walks producer edges iteratively.
std::string
describeCycle(const onnx::GraphProto &G, const std::vector<bool> &Ordered,
              const std::unordered_map<std::string, size_t> &Producer) {
  size_t Start =
      std::find(Ordered.begin(), Ordered.end(), false) - Ordered.begin();
  // Step from a node to the producer of one of its inputs that is not
  // ordered either (there always is one), until a node repeats.
  std::vector<std::pair<size_t, std::string>> Path; // node, input it reads
  std::unordered_map<size_t, size_t> Where;         // node -> index in Path
  size_t I = Start;
  while (!Where.count(I)) {
    Where[I] = Path.size();
    const onnx::NodeProto &N = G.node(static_cast<int>(I));
    std::string Via;
    size_t Next = I;
    for (const std::string &In : N.input()) {
      auto It = Producer.find(In);
      if (It != Producer.end() && !Ordered[It->second]) {
        Via = In;
        Next = It->second;
        break;
      }
    }
    Path.push_back({I, Via});
    I = Next;
  }
  std::string S;
  for (size_t K = Where[I]; K < Path.size(); ++K) {
    size_t Node = Path[K].first;
    if (K == Where[I])
      S += describe(G.node(static_cast<int>(Node)), Node);
    size_t From = K + 1 < Path.size() ? Path[K + 1].first : I;
    S += fmt::format("{} reads '{}' from {}", K == Where[I] ? "" : ", which",
                     Path[K].second,
                     describe(G.node(static_cast<int>(From)), From));
  }
  return S;
}

} // namespace

llvm::Error checkGraphStructure(const onnx::GraphProto &G) {
  std::unordered_set<std::string> Given{""}; // "" is an omitted input
  for (const auto &In : G.input())
    Given.insert(In.name());
  for (const auto &T : G.initializer())
    Given.insert(T.name());
  for (const auto &T : G.sparse_initializer())
    Given.insert(T.values().name());

  // Who produces what; a name produced twice is an error of its own.
  std::unordered_map<std::string, size_t> Producer;
  llvm::Error All = llvm::Error::success();
  for (int I = 0; I < G.node_size(); ++I)
    for (const std::string &Out : G.node(I).output()) {
      if (Out.empty())
        continue;
      auto [It, New] = Producer.try_emplace(Out, I);
      if (!New)
        All = llvm::joinErrors(
            std::move(All),
            makeError(
                "{}: output '{}' is also produced by {}",
                describe(G.node(I), I), Out,
                describe(G.node(static_cast<int>(It->second)), It->second)));
      else if (Given.count(Out))
        All = llvm::joinErrors(
            std::move(All),
            makeError("{}: output '{}' is also a graph input or initializer",
                      describe(G.node(I), I), Out));
    }
  // Inputs nothing defines: every one, with its node.
  for (int I = 0; I < G.node_size(); ++I)
    for (const std::string &In : G.node(I).input())
      if (!Given.count(In) && !Producer.count(In))
        All = llvm::joinErrors(
            std::move(All),
            makeError("{}: input '{}' is not an initializer, a graph input or "
                      "the output of any node (a missing initializer, or a "
                      "misspelt name?)",
                      describe(G.node(I), I), In));
  for (const auto &Out : G.output())
    if (!Given.count(Out.name()) && !Producer.count(Out.name()))
      All = llvm::joinErrors(std::move(All),
                             makeError("graph output '{}' is not produced by "
                                       "any node",
                                       Out.name()));
  if (All)
    return All;

  // Cycles (Kahn's algorithm over the producer edges), then order.
  size_t N = G.node_size();
  std::vector<std::vector<size_t>> Users(N);
  std::vector<size_t> Missing(N, 0);
  for (size_t I = 0; I < N; ++I) {
    std::unordered_set<size_t> Seen;
    for (const std::string &In : G.node(static_cast<int>(I)).input())
      if (auto It = Producer.find(In);
          It != Producer.end() && Seen.insert(It->second).second) {
        Users[It->second].push_back(I);
        ++Missing[I];
      }
  }
  std::vector<size_t> Ready;
  std::vector<bool> Ordered(N, false);
  for (size_t I = 0; I < N; ++I)
    if (!Missing[I])
      Ready.push_back(I);
  size_t Count = 0;
  while (!Ready.empty()) {
    size_t I = Ready.back();
    Ready.pop_back();
    Ordered[I] = true;
    ++Count;
    for (size_t U : Users[I])
      if (--Missing[U] == 0)
        Ready.push_back(U);
  }
  if (Count != N)
    return makeError("the nodes form a cycle: {}",
                     describeCycle(G, Ordered, Producer));
  for (size_t I = 0; I < N; ++I)
    for (const std::string &In : G.node(static_cast<int>(I)).input())
      if (auto It = Producer.find(In); It != Producer.end() && It->second > I)
        return makeError(
            "{} reads '{}' before {} produces it: the nodes "
            "must be in topological order (each after the "
            "nodes that produce its inputs)",
            describe(G.node(static_cast<int>(I)), I), In,
            describe(G.node(static_cast<int>(It->second)), It->second));
  return llvm::Error::success();
}

llvm::Error fillMissingShapes(onnx::ModelProto &M,
                              const onnx::ISchemaRegistry *Registry) {
  auto *GP = M.mutable_graph();
  auto NoShape = [](const onnx::ValueInfoProto &VI) {
    return VI.type().has_tensor_type() && !VI.type().tensor_type().has_shape();
  };
  for (const auto &In : GP->input())
    if (NoShape(In))
      return makeError(
          "graph input '{}' has no shape; cuvil needs the "
          "input shapes: write them into the model (e.g. "
          "onnx.tools.update_model_dims.update_inputs_outputs_dims)",
          In.name());
  // value_info entries are hints: one without a shape says nothing.
  auto *VIs = GP->mutable_value_info();
  VIs->erase(std::remove_if(VIs->begin(), VIs->end(), NoShape), VIs->end());
  if (std::none_of(GP->output().begin(), GP->output().end(), NoShape))
    return llvm::Error::success();
  // What inference could not infer is reported below, output by output,
  // with the reason it gave when it stopped early.
  std::string Stopped;
  try {
    onnx::ShapeInferenceOptions SO(/*check_type=*/false, /*strict=*/0,
                                   /*data_prop=*/true);
    onnx::shape_inference::InferShapes(M, Registry, SO);
  } catch (const std::exception &E) {
    Stopped = fmt::format(" (inference stopped: {})", E.what());
  }
  llvm::Error All = llvm::Error::success();
  for (const auto &Out : GP->output())
    if (NoShape(Out))
      All = llvm::joinErrors(
          std::move(All),
          makeError("graph output '{}' has no shape and ONNX shape inference "
                    "cannot infer one{}; write its shape into the model's "
                    "graph outputs",
                    Out.name(), Stopped));
  return All;
}

llvm::Error checkRanksOnnxInferenceAssumes(const onnx::GraphProto &GP) {
  struct Assumption {
    const char *Op;
    int Input;
    int Rank;   ///< Exact rank, or -1.
    int SameAs; ///< Input whose rank it must have, or -1.
    const char *Layout;
  };
  static const Assumption Assumptions[] = {
      {"STFT", 0, 3, -1, "[batch, length, 1 or 2]"},
      {"Conv", 1, -1, 0, "[M, C/group, k1, k2...]"},
      {"ConvTranspose", 1, -1, 0, "[C, M/group, k1, k2...]"},
      {"ConvInteger", 1, -1, 0, "[M, C/group, k1, k2...]"},
      {"QLinearConv", 3, -1, 0, "[M, C/group, k1, k2...]"},
      {"MaxUnpool", 1, -1, 0, "the indices have the shape of X"},
  };
  std::unordered_map<std::string, int> Ranks;
  auto Note = [&](const onnx::ValueInfoProto &VI) {
    if (VI.type().has_tensor_type() && VI.type().tensor_type().has_shape())
      Ranks[VI.name()] = VI.type().tensor_type().shape().dim_size();
  };
  for (const auto &VI : GP.value_info())
    Note(VI);
  for (const auto &VI : GP.input())
    Note(VI);
  for (const auto &T : GP.initializer())
    Ranks[T.name()] = T.dims_size();
  auto RankOf = [&](const onnx::NodeProto &NP, int I) {
    auto It = I < NP.input_size() ? Ranks.find(NP.input(I)) : Ranks.end();
    return It == Ranks.end() ? -1 : It->second;
  };
  // Counts ONNX's inference sizes vectors by: a Scan's num_scan_inputs of
  // 2^31 makes it allocate until the process is killed. In subgraphs too.
  llvm::Error Counts = llvm::Error::success();
  // Divides by them: a stride of 0 on a Conv or pool is a SIGFPE in its
  // shape inference (found by fuzz_onnx).
  static const std::set<std::string> WindowOps = {
      "Conv",        "ConvTranspose", "ConvInteger", "QLinearConv",
      "AveragePool", "MaxPool",       "LpPool",      "MaxUnpool"};
  forEachOnnxNode(GP, [&](const onnx::NodeProto &NP, int Index) {
    if (Counts)
      return;
    std::string Name = NP.name().empty()
                           ? NP.op_type() + "_" + std::to_string(Index)
                           : NP.name();
    if (NP.op_type() == "Scan")
      for (const auto &A : NP.attribute())
        if (A.name() == "num_scan_inputs" &&
            (A.i() < 1 || A.i() > NP.input_size()))
          Counts = makeError("node '{}' (Scan): num_scan_inputs is {}; it "
                             "must be between 1 and the node's {} inputs",
                             Name, A.i(), NP.input_size());
    // Reads them without a check: a Scan without a graph 'body' is a null
    // dereference in its shape inference (found by fuzz_onnx).
    static const std::map<std::string, std::vector<std::string>> Bodies = {
        {"If", {"then_branch", "else_branch"}},
        {"Loop", {"body"}},
        {"Scan", {"body"}},
        {"SequenceMap", {"body"}}};
    if (auto It = Bodies.find(NP.op_type());
        It != Bodies.end() && (NP.domain().empty() || NP.domain() == "ai.onnx"))
      for (const std::string &Body : It->second) {
        const auto &As = NP.attribute();
        if (!Counts && std::none_of(As.begin(), As.end(), [&](const auto &A) {
              return A.name() == Body && A.has_g();
            }))
          Counts = makeError("node '{}' ({}): attribute '{}' is missing or "
                             "not a graph; it must hold the {} graph",
                             Name, NP.op_type(), Body,
                             NP.op_type() == "If" ? "branch's" : "loop body's");
      }
    if (WindowOps.count(NP.op_type()))
      for (const auto &A : NP.attribute())
        if (A.name() == "strides" || A.name() == "dilations" ||
            A.name() == "kernel_shape")
          for (int64_t V : A.ints())
            if (V < 1 && !Counts)
              Counts = makeError("node '{}' ({}): {} holds {}; every value "
                                 "must be at least 1",
                                 Name, NP.op_type(), A.name(), V);
  });
  if (Counts)
    return Counts;
  int Index = 0;
  for (const auto &NP : GP.node()) {
    // Unnamed nodes as the importer names them.
    std::string Name = NP.name().empty()
                           ? NP.op_type() + "_" + std::to_string(Index)
                           : NP.name();
    ++Index;
    for (const Assumption &A : Assumptions) {
      if (NP.op_type() != A.Op)
        continue;
      int R = RankOf(NP, A.Input);
      if (R < 0)
        continue;
      if (A.Rank >= 0 && R != A.Rank)
        return makeError("node '{}' ({}): input '{}' has rank {}; it must "
                         "have rank {}: {}",
                         Name, NP.op_type(), NP.input(A.Input), R, A.Rank,
                         A.Layout);
      int Other = A.SameAs >= 0 ? RankOf(NP, A.SameAs) : -1;
      if (Other >= 0 && R != Other)
        return makeError("node '{}' ({}): input '{}' has rank {}; it must "
                         "have the rank of input '{}' ({}): {}",
                         Name, NP.op_type(), NP.input(A.Input), R,
                         NP.input(A.SameAs), Other, A.Layout);
    }
  }
  return llvm::Error::success();
}

} // namespace cuvil
