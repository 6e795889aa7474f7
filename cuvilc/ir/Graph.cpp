//===- Graph.cpp ----------------------------------------------------------===//
#include "ir/Graph.h"
#include "ir/CheckedMath.h"
#include "ir/Diagnostic.h"
#include "ir/IRSyntax.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unordered_map>
#include <unordered_set>

namespace cuvil {

int64_t Value::numElements() const {
  int64_t N = 1;
  for (int64_t D : Shape)
    if (__builtin_mul_overflow(N, D, &N))
      return INT64_MAX;
  return N;
}

int64_t Value::byteSize() const {
  int64_t N = numElements();
  if (N == INT64_MAX)
    return INT64_MAX;
  return checkedByteCount(N, dtypeSize(Ty)).value_or(INT64_MAX);
}

llvm::Error checkTensorSize(const Value &V, unsigned AddressBits) {
  if (!V.hasStaticShape())
    return llvm::Error::success();
  // The target's address space, and in any case 2^62 bytes: offsets and
  // aligned sizes of such tensors still fit in int64_t arithmetic.
  unsigned __int128 Limit = static_cast<unsigned __int128>(1)
                            << std::min(AddressBits, 62u);
  unsigned __int128 Count = wideElementCount(V.shape());
  unsigned __int128 Bytes;
  if (__builtin_mul_overflow(
          Count, static_cast<unsigned __int128>(dtypeSize(V.dtype())), &Bytes))
    Bytes = ~static_cast<unsigned __int128>(0);
  if (Bytes <= Limit)
    return llvm::Error::success();
  std::string Space = AddressBits > 62 ? "the target's address space"
                                       : fmt::format("the target's {}-bit "
                                                     "address space",
                                                     AddressBits);
  return makeError("tensor '{}' has {} elements ({} bytes of {}): more than "
                   "{}",
                   V.name(), countText(Count), countText(Bytes),
                   dtypeName(V.dtype()), Space);
}

llvm::Error Graph::checkTensorSizes(unsigned AddressBits) const {
  // The first one only (values are in definition order): the tensors
  // computed from a huge one are huge too, and say nothing more.
  for (const auto &V : Values)
    if (auto E = checkTensorSize(*V, AddressBits))
      return E;
  return llvm::Error::success();
}

bool Value::hasStaticShape() const {
  return std::all_of(Shape.begin(), Shape.end(),
                     [](int64_t D) { return D >= 0; });
}

std::vector<int64_t> Value::toInt64s() const {
  assert(isConstant() && "toInt64s on a non-constant");
  std::vector<int64_t> Out(numElements());
  for (size_t I = 0; I < Out.size(); ++I) {
    if (Ty == DType::I64) {
      std::memcpy(&Out[I], Data.data() + I * 8, 8);
    } else if (Ty == DType::I32) {
      int32_t X;
      std::memcpy(&X, Data.data() + I * 4, 4);
      Out[I] = X;
    } else {
      assert(false && "toInt64s on a non-integer constant");
    }
  }
  return Out;
}

void Origin::merge(const Origin &O) {
  for (size_t I = 0; I < O.Names.size(); ++I) {
    if (std::find(Indices.begin(), Indices.end(), O.Indices[I]) !=
        Indices.end())
      continue;
    Names.push_back(O.Names[I]);
    Indices.push_back(O.Indices[I]);
  }
}

std::string Origin::str() const {
  std::string S;
  for (size_t I = 0; I < Names.size(); ++I)
    S += fmt::format("{}{}#{}", I ? ", " : "", Names[I], Indices[I]);
  return S;
}

Value *Node::outputAt(unsigned Pos) const {
  for (size_t I = 0; I < Outputs.size(); ++I)
    if (outputPos(I) == Pos)
      return Outputs[I];
  return nullptr;
}

int64_t Node::getInt(const std::string &N, int64_t Default) const {
  auto It = Attrs.find(N);
  if (It == Attrs.end())
    return Default;
  if (auto *V = std::get_if<int64_t>(&It->second))
    return *V;
  return Default;
}

float Node::getFloat(const std::string &N, float Default) const {
  auto It = Attrs.find(N);
  if (It == Attrs.end())
    return Default;
  if (auto *V = std::get_if<float>(&It->second))
    return *V;
  return Default;
}

std::string Node::getString(const std::string &N,
                            const std::string &Default) const {
  auto It = Attrs.find(N);
  if (It == Attrs.end())
    return Default;
  if (auto *V = std::get_if<std::string>(&It->second))
    return *V;
  return Default;
}

std::vector<int64_t> Node::getInts(const std::string &N,
                                   std::vector<int64_t> Default) const {
  auto It = Attrs.find(N);
  if (It == Attrs.end())
    return Default;
  if (auto *V = std::get_if<std::vector<int64_t>>(&It->second))
    return *V;
  return Default;
}

std::vector<std::string>
Node::getStrings(const std::string &N, std::vector<std::string> Default) const {
  auto It = Attrs.find(N);
  if (It == Attrs.end())
    return Default;
  if (auto *V = std::get_if<std::vector<std::string>>(&It->second))
    return *V;
  return Default;
}

void Value::removeUser(Node *N) {
  // From the back: passes remove users latest first (dead code, folding).
  auto It = std::find(Users.rbegin(), Users.rend(), N);
  assert(It != Users.rend() && "use list out of sync");
  Users.erase(std::next(It).base());
}

void Node::setInput(size_t I, Value *V) {
  assert(I < Inputs.size() && "input index out of range");
  if (Inputs[I])
    Inputs[I]->removeUser(this);
  Inputs[I] = V;
  if (V)
    V->Users.push_back(this);
}

Value *Graph::addValue(std::string N, DType Ty, std::vector<int64_t> Shape,
                       ValueKind Kind) {
  Values.push_back(std::make_unique<Value>(NextValueId++, std::move(N), Ty,
                                           std::move(Shape), Kind));
  return Values.back().get();
}

Node *Graph::addNode(std::string OpType, std::string N, const OpDef *Def,
                     std::vector<Value *> Ins, std::vector<Value *> Outs) {
  Nodes.push_back(std::make_unique<Node>(NextNodeId++, std::move(OpType),
                                         std::move(N), Def));
  Node *Nd = Nodes.back().get();
  Nd->Inputs = std::move(Ins);
  Nd->Outputs = std::move(Outs);
  for (Value *V : Nd->Inputs)
    if (V)
      V->Users.push_back(Nd);
  for (Value *V : Nd->Outputs) {
    assert(!V->Producer && "value produced twice");
    V->Producer = Nd;
  }
  return Nd;
}

void Graph::setNodeOutputs(Node *N, std::vector<Value *> Outs,
                           std::vector<unsigned> Pos) {
  assert(N->Outputs.empty() && "node outputs already set");
  assert((Pos.empty() || Pos.size() == Outs.size()) && "one position each");
  N->Outputs = std::move(Outs);
  bool Identity = true;
  for (size_t I = 0; I < Pos.size(); ++I)
    Identity &= Pos[I] == I;
  if (!Identity)
    N->OutputPos = std::move(Pos);
  for (Value *V : N->Outputs) {
    assert(!V->Producer && "value produced twice");
    V->Producer = N;
  }
}

void Graph::addNodeOutput(Node *N, Value *V) {
  assert(!V->Producer && "value produced twice");
  if (!N->OutputPos.empty())
    N->OutputPos.push_back(N->OutputPos.back() + 1);
  N->Outputs.push_back(V);
  V->Producer = N;
}

void Graph::addNodeInput(Node *N, Value *V) {
  N->Inputs.push_back(V);
  if (V)
    V->Users.push_back(N);
}

void Graph::truncateNodeInputs(Node *N, size_t Count) {
  while (N->Inputs.size() > Count) {
    if (Value *V = N->Inputs.back())
      V->removeUser(N);
    N->Inputs.pop_back();
  }
}

void Graph::eraseNode(Node *N) {
  for (Value *V : N->Inputs)
    if (V)
      V->removeUser(N);
  for (Value *V : N->Outputs)
    V->Producer = nullptr;
  auto It = std::find_if(Nodes.begin(), Nodes.end(),
                         [N](const auto &P) { return P.get() == N; });
  assert(It != Nodes.end() && "erasing a node not in the graph");
  Nodes.erase(It);
}

void Graph::eraseNodes(const std::vector<Node *> &Dead) {
  std::unordered_set<const Node *> Set(Dead.begin(), Dead.end());
  for (Node *N : Dead) {
    for (Value *V : N->Inputs)
      if (V)
        V->removeUser(N);
    for (Value *V : N->Outputs)
      V->Producer = nullptr;
  }
  std::erase_if(Nodes, [&](const std::unique_ptr<Node> &N) {
    return Set.count(N.get()) != 0;
  });
}

Node *Graph::replaceNode(Node *Old, std::string OpType, const OpDef *Def,
                         std::vector<Value *> Ins) {
  auto It = std::find_if(Nodes.begin(), Nodes.end(),
                         [Old](const auto &P) { return P.get() == Old; });
  assert(It != Nodes.end() && "replacing a node not in the graph");
  auto New =
      std::make_unique<Node>(NextNodeId++, std::move(OpType), Old->Name, Def);
  New->Opset = Old->Opset;
  New->Domain = Old->Domain;
  New->Orig = Old->Orig;
  New->Inputs = std::move(Ins);
  for (Value *V : New->Inputs)
    if (V)
      V->Users.push_back(New.get());
  for (Value *V : Old->Inputs)
    if (V)
      V->removeUser(Old);
  New->Outputs = std::move(Old->Outputs);
  New->OutputPos = std::move(Old->OutputPos);
  for (Value *V : New->Outputs)
    V->Producer = New.get();
  *It = std::move(New);
  return It->get();
}

void Graph::reorderNodes(const std::vector<Node *> &Order) {
  assert(Order.size() == Nodes.size() && "reorder must keep every node");
  std::unordered_map<const Node *, std::unique_ptr<Node>> Owned;
  for (auto &N : Nodes)
    Owned[N.get()] = std::move(N);
  for (size_t I = 0; I < Order.size(); ++I) {
    auto It = Owned.find(Order[I]);
    assert(It != Owned.end() && It->second && "node missing or repeated");
    Nodes[I] = std::move(It->second);
  }
}

void Graph::replaceAllUses(Value *From, Value *To) {
  std::vector<Node *> Users = From->Users;
  for (Node *U : Users)
    for (size_t I = 0; I < U->Inputs.size(); ++I)
      if (U->Inputs[I] == From)
        U->setInput(I, To);
  for (Value *&O : Outputs)
    if (O == From)
      O = To;
}

void Graph::foldNodeInto(Node *Folded, Value *Result) {
  Result->producer()->origin().merge(Folded->origin());
  Value *Y = Folded->output(0);
  eraseNode(Folded);
  replaceAllUses(Y, Result);
  // The user-visible output keeps the ONNX name of the folded node's result.
  if (isGraphOutput(Result))
    Result->setName(Y->name());
}

bool Graph::isGraphOutput(const Value *V) const {
  return std::find(Outputs.begin(), Outputs.end(), V) != Outputs.end();
}

void Graph::eraseDeadValues() {
  std::unordered_set<const Value *> Kept(Inputs.begin(), Inputs.end());
  Kept.insert(Outputs.begin(), Outputs.end());
  std::erase_if(Values, [&](const std::unique_ptr<Value> &V) {
    return V->Users.empty() && !V->Producer && !Kept.count(V.get());
  });
}

static std::string attrStr(const AttrValue &A) {
  return std::visit(
      [](const auto &X) -> std::string {
        using T = std::decay_t<decltype(X)>;
        if constexpr (std::is_same_v<T, std::string>)
          return fmt::format("\"{}\"", X);
        else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                           std::is_same_v<T, std::vector<float>>)
          return fmt::format("[{}]", fmt::join(X, ","));
        else if constexpr (std::is_same_v<T, std::vector<std::string>>)
          return fmt::format("[\"{}\"]", fmt::join(X, "\",\""));
        else
          return fmt::format("{}", X);
      },
      A);
}

std::string Graph::summary() const {
  std::string S = fmt::format("graph {}\n", Name);
  for (const Value *V : Inputs)
    S += fmt::format("  input %{}: {}\n", V->name(), typeText(V));
  for (const auto &V : Values)
    if (V->isConstant() && (!V->users().empty() || isGraphOutput(V.get())))
      S += fmt::format("  const %{}: {}\n", V->name(), typeText(V.get()));
  for (const auto &N : Nodes) {
    std::vector<std::string> Outs, Ins, As;
    for (const Value *V : N->outputs())
      Outs.push_back(fmt::format("%{}: {}", V->name(), typeText(V)));
    for (const Value *V : N->inputs())
      Ins.push_back(V ? "%" + V->name() : std::string("<none>"));
    for (const auto &[K, A] : N->attrs())
      As.push_back(fmt::format("{}={}", K, attrStr(A)));
    S += fmt::format("  {} = {}({}){}  # {}\n", fmt::join(Outs, ", "),
                     N->opType(), fmt::join(Ins, ", "),
                     As.empty() ? ""
                                : fmt::format(" {{{}}}", fmt::join(As, ", ")),
                     N->origin().str());
  }
  std::vector<std::string> Outs;
  for (const Value *V : Outputs)
    Outs.push_back("%" + V->name());
  S += fmt::format("  return {}\n", fmt::join(Outs, ", "));
  return S;
}

} // namespace cuvil
