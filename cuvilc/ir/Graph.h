//===- Graph.h - The cuvil IR: a DAG of nodes over typed values -*- C++ -*-===//
//
// A Graph owns Values (tensors) and Nodes (operators). Shapes are static
// (symbolic dimensions are resolved to their declared bound by the frontend).
// Right after import a dimension ONNX shape inference could not determine
// is UnknownDim (a shape of unknown rank is {UnknownRank}); the
// fold-constants pass resolves those it can, and verification rejects the
// rest.
// Constants (ONNX initializers) are Values that carry their data. Every Node
// keeps its Origin: the ONNX node(s) it came from, merged by fusion.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_IR_GRAPH_H
#define CUVIL_IR_GRAPH_H

#include "ir/DType.h"

#include <cstdint>
#include <functional>
#include <llvm/Support/Error.h>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cuvil {

class Node;
struct OpDef;

/// How Graph::print writes constant data (see ir/IRPrinter.cpp).
struct IRPrintOptions {
  /// Print the data of every constant, so that the text parses back into
  /// the same graph; otherwise a constant of more than 16 elements that is
  /// not a splat prints as elided<...> (its size and content hash), which
  /// the parser refuses.
  bool FullData = false;
  /// A note to print after each node as a `//` comment (the parser skips
  /// it), e.g. what the node's OpDef does; none when it returns "".
  std::function<std::string(const Node &)> NodeNote;
};

/// A dimension not known yet (only between import and shape resolution).
constexpr int64_t UnknownDim = -1;
/// The shape {UnknownRank}: not even the rank is known yet.
constexpr int64_t UnknownRank = -2;

enum class ValueKind : uint8_t {
  Input,        ///< Graph input, provided by the caller.
  Constant,     ///< Initializer: data known at compile time.
  Intermediate, ///< Produced by a node (may also be a graph output).
};

class Value {
public:
  Value(unsigned Id, std::string Name, DType Ty, std::vector<int64_t> Shape,
        ValueKind Kind)
      : Id(Id), Name(std::move(Name)), Ty(Ty), Shape(std::move(Shape)),
        Kind(Kind) {}

  unsigned id() const { return Id; }
  const std::string &name() const { return Name; }
  DType dtype() const { return Ty; }
  const std::vector<int64_t> &shape() const { return Shape; }
  size_t rank() const { return Shape.size(); }
  ValueKind kind() const { return Kind; }
  bool isConstant() const { return Kind == ValueKind::Constant; }
  /// Whether every dimension is known (no UnknownDim or UnknownRank).
  bool hasStaticShape() const;

  /// Number of elements (1 for a scalar). Saturates at INT64_MAX: a
  /// shape whose count does not fit is refused by checkTensorSizes before
  /// any stage relies on it.
  int64_t numElements() const;
  /// Size in bytes of the dense tensor (saturated like numElements).
  int64_t byteSize() const;

  /// Constant data (dense, little-endian). Only for constants.
  const std::vector<uint8_t> &data() const { return Data; }
  void setData(std::vector<uint8_t> D) { Data = std::move(D); }
  /// Typed view of constant data.
  const float *f32() const {
    return reinterpret_cast<const float *>(Data.data());
  }
  std::vector<int64_t> toInt64s() const;

  Node *producer() const { return Producer; }
  const std::vector<Node *> &users() const { return Users; }

  void setShape(std::vector<int64_t> S) { Shape = std::move(S); }
  void setName(std::string N) { Name = std::move(N); }

private:
  friend class Graph;
  friend class Node;
  void removeUser(Node *N);

  unsigned Id;
  std::string Name;
  DType Ty;
  std::vector<int64_t> Shape;
  ValueKind Kind;
  std::vector<uint8_t> Data;
  Node *Producer = nullptr;
  std::vector<Node *> Users;
};

/// Attribute values as the ops see them (independent of ONNX's protobuf).
using AttrValue =
    std::variant<int64_t, float, std::string, std::vector<int64_t>,
                 std::vector<float>, std::vector<std::string>>;

/// Where a node came from: ONNX node names and their indices in the model.
struct Origin {
  std::vector<std::string> Names;
  std::vector<int> Indices;
  void merge(const Origin &O);
  std::string str() const;
};

class Node {
public:
  Node(unsigned Id, std::string OpType, std::string Name, const OpDef *Def)
      : Id(Id), OpType(std::move(OpType)), Name(std::move(Name)), Def(Def) {}

  unsigned id() const { return Id; }
  const std::string &opType() const { return OpType; }
  const std::string &name() const { return Name; }
  /// The registry entry of this op, or null when cuvil does not support it.
  const OpDef *def() const { return Def; }
  /// Version of the operator set (of the op's domain) the model imports:
  /// ONNX semantics of some ops change with it.
  int64_t opset() const { return Opset; }
  void setOpset(int64_t V) { Opset = V; }
  /// The ONNX domain of a node outside the default one ("" for ai.onnx).
  const std::string &domain() const { return Domain; }
  void setDomain(std::string D) { Domain = std::move(D); }
  /// Why the frontend could not make a supported node of this one (said by
  /// verification); empty when it had no more to say.
  const std::string &unsupportedReason() const { return Unsupported; }
  void setUnsupportedReason(std::string R) { Unsupported = std::move(R); }

  /// Inputs in ONNX order; an omitted optional input is null.
  const std::vector<Value *> &inputs() const { return Inputs; }
  /// Outputs that exist, in ONNX order. An optional output the model left
  /// out ("") is not here, so after one, output(I) is not ONNX output I:
  /// ops with optional outputs in the middle use outputAt.
  const std::vector<Value *> &outputs() const { return Outputs; }
  Value *input(size_t I) const {
    return I < Inputs.size() ? Inputs[I] : nullptr;
  }
  Value *output(size_t I) const { return Outputs[I]; }
  /// ONNX output position of outputs()[I].
  unsigned outputPos(size_t I) const {
    return I < OutputPos.size() ? OutputPos[I] : static_cast<unsigned>(I);
  }
  /// The output at ONNX position Pos, or null when the model left it out
  /// (and the op did not ask for it as scratch, see OpDef::ScratchOutputs).
  Value *outputAt(unsigned Pos) const;
  size_t numInputs() const { return Inputs.size(); }

  const Origin &origin() const { return Orig; }
  Origin &origin() { return Orig; }

  // Attributes.
  bool hasAttr(const std::string &N) const { return Attrs.count(N) != 0; }
  const std::map<std::string, AttrValue> &attrs() const { return Attrs; }
  void setAttr(const std::string &N, AttrValue V) { Attrs[N] = std::move(V); }
  void removeAttr(const std::string &N) { Attrs.erase(N); }
  int64_t getInt(const std::string &N, int64_t Default) const;
  float getFloat(const std::string &N, float Default) const;
  std::string getString(const std::string &N, const std::string &Default) const;
  std::vector<int64_t> getInts(const std::string &N,
                               std::vector<int64_t> Default = {}) const;
  std::vector<std::string>
  getStrings(const std::string &N, std::vector<std::string> Default = {}) const;

  /// Replaces input I (updating use lists).
  void setInput(size_t I, Value *V);

private:
  friend class Graph;
  unsigned Id;
  std::string OpType;
  std::string Name;
  const OpDef *Def;
  int64_t Opset = 0;
  std::string Domain;
  std::string Unsupported;
  std::vector<Value *> Inputs;
  std::vector<Value *> Outputs;
  /// ONNX position of each output; empty when they are 0, 1, 2...
  std::vector<unsigned> OutputPos;
  std::map<std::string, AttrValue> Attrs;
  Origin Orig;
};

/// Refuses a tensor larger than an address space of AddressBits bits (the
/// target's pointer width), and in any case larger than 2^62 bytes (so
/// that offsets and aligned sizes stay exact in int64_t): "tensor 'x' has
/// 2^63 elements (2^65 bytes of f32): more than the target's address
/// space". Only static shapes are checked.
llvm::Error checkTensorSize(const Value &V, unsigned AddressBits = 64);

class Graph {
public:
  explicit Graph(std::string Name) : Name(std::move(Name)) {}

  const std::string &name() const { return Name; }

  Value *addValue(std::string Name, DType Ty, std::vector<int64_t> Shape,
                  ValueKind Kind);
  /// Adds a node; outputs become Intermediate values produced by it.
  Node *addNode(std::string OpType, std::string Name, const OpDef *Def,
                std::vector<Value *> Inputs, std::vector<Value *> Outputs);
  /// Sets the outputs of a node created without them; Pos gives their ONNX
  /// positions when some optional output is left out (empty: 0, 1, 2...).
  void setNodeOutputs(Node *N, std::vector<Value *> Outs,
                      std::vector<unsigned> Pos = {});
  /// Appends an input to a node.
  void addNodeInput(Node *N, Value *V);
  /// Appends an output to a node (V, produced by no node yet), at the ONNX
  /// position after its last.
  void addNodeOutput(Node *N, Value *V);
  /// Drops a node's inputs from index Count on.
  void truncateNodeInputs(Node *N, size_t Count);
  /// Removes a node (its outputs must be unused or rewired first).
  void eraseNode(Node *N);
  /// Removes several nodes at once (linear in the graph, not per node).
  void eraseNodes(const std::vector<Node *> &Dead);
  /// Rebuilds Old as a node of another definition (node definitions are
  /// fixed at creation) reading Inputs, in Old's place in the node order:
  /// it keeps Old's name, opset, origin and outputs (the same values, with
  /// their uses); attributes are the caller's to set. Old is erased.
  Node *replaceNode(Node *Old, std::string OpType, const OpDef *Def,
                    std::vector<Value *> Inputs);
  /// Puts the nodes in Order (a permutation of nodes()).
  void reorderNodes(const std::vector<Node *> &Order);
  /// Rewires every use of From (including graph outputs) to To.
  void replaceAllUses(Value *From, Value *To);
  /// Fusion: the single-output node Folded is now computed by the producer
  /// of Result. That producer takes Folded's ONNX origin; Folded's uses go
  /// to Result, which keeps Folded's name if it is a graph output; Folded
  /// is erased.
  void foldNodeInto(Node *Folded, Value *Result);
  /// Drops values that are neither used, produced, nor graph inputs/outputs.
  void eraseDeadValues();

  /// Nodes in execution (topological) order.
  const std::vector<std::unique_ptr<Node>> &nodes() const { return Nodes; }
  const std::vector<std::unique_ptr<Value>> &values() const { return Values; }
  std::vector<Value *> &inputs() { return Inputs; }
  const std::vector<Value *> &inputs() const { return Inputs; }
  std::vector<Value *> &outputs() { return Outputs; }
  const std::vector<Value *> &outputs() const { return Outputs; }
  bool isGraphOutput(const Value *V) const;

  /// checkTensorSize for every value; reports the first that fails.
  llvm::Error checkTensorSizes(unsigned AddressBits = 64) const;

  /// The textual IR (for --dump-ir and cuvil-opt), with shapes, constant
  /// data, attributes and origins; ir/IRParser.h reads it back. The syntax
  /// is described in ir/IRPrinter.cpp.
  std::string print(const IRPrintOptions &O = {}) const;
  /// The one-line-per-node summary --dump-ir printed before the IR could be
  /// parsed back (no data, opsets or node names). The graph hash
  /// (driver/Build.cpp) is computed over it, and generated code embeds
  /// that hash: changing this text changes every object.
  std::string summary() const;
  /// The same graph as one line of JSON (--dump-ir-format json): every
  /// value's type, every node's id, op, operands, attributes and origins,
  /// with the source location of each origin the model records. After:
  /// the pass the graph was dumped after.
  std::string printJson(std::string_view After) const;

  /// Where ONNX node OnnxIndex (an Origin index) was written, as
  /// "file:line (function)", when the model records it (PyTorch's
  /// exporter puts the Python stack in doc_string); empty otherwise.
  const std::string &sourceOf(int OnnxIndex) const;
  void setSourceOf(int OnnxIndex, std::string Location) {
    Sources[OnnxIndex] = std::move(Location);
  }

private:
  std::string Name;
  std::map<int, std::string> Sources;
  std::vector<std::unique_ptr<Value>> Values;
  std::vector<std::unique_ptr<Node>> Nodes;
  std::vector<Value *> Inputs;
  std::vector<Value *> Outputs;
  unsigned NextValueId = 0;
  unsigned NextNodeId = 0;
};

} // namespace cuvil

#endif
