//===- OnnxImporter.cpp ---------------------------------------------------===//
//
// This is the only library built with exceptions and RTTI: the ONNX checker
// and shape inference report problems by throwing. Every exception is
// caught here and turned into an llvm::Error.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/OnnxImporter.h"
#include "frontend/onnx/CustomSchemas.h"
#include "frontend/onnx/GraphCheck.h"
#include "frontend/onnx/LoopBounds.h"
#include "frontend/onnx/Opsets.h"
#include "frontend/onnx/Schemas.h"
#include "frontend/onnx/SourceLocation.h"
#include "frontend/onnx/TensorProto.h"
#include "frontend/onnx/Unroll.h"

#include "ir/CheckedMath.h"
#include "ir/Diagnostic.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/RuntimeOps.h"
#include "ops/custom/CustomOp.h"

#include <llvm/Support/MemoryBuffer.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>
#include <unordered_map>

namespace cuvil {
namespace {

class Importer {
public:
  Importer(onnx::ModelProto &M, const ImportOptions &Opts) : M(M), Opts(Opts) {}

  llvm::Expected<std::unique_ptr<Graph>> run();

private:
  llvm::Error resolveInputDims();
  llvm::Expected<Value *> addConstant(const onnx::TensorProto &T,
                                      const std::string &Name);
  llvm::Expected<Value *> createValue(const std::string &Name, const Node *User,
                                      ValueKind Kind);
  llvm::Error importNode(const onnx::NodeProto &NP, int Index);
  llvm::Error inlineSubgraph(const onnx::GraphProto &Sub, int Index);

  onnx::ModelProto &M;
  const ImportOptions &Opts;
  std::unique_ptr<Graph> G;
  std::unordered_map<std::string, Value *> Values;
  std::unordered_map<std::string, const onnx::ValueInfoProto *> Infos;
  std::unordered_map<std::string, int64_t> Opsets;
  /// Why a Scan or Loop stayed as is, by its first output (see
  /// unrollLoops).
  std::map<std::string, std::string> Declined;
  /// The Loops unrolled to the user's bound (--loop-bound).
  std::vector<LoopBoundCheck> BoundChecks;
};

llvm::Error Importer::resolveInputDims() {
  std::set<std::string> Used, Initializers;
  auto *GP = M.mutable_graph();
  for (const auto &T : GP->initializer())
    Initializers.insert(T.name());
  for (auto &In : *GP->mutable_input()) {
    // An optional tensor (PyTorch's Optional[Tensor] argument) is a tensor
    // input the caller may leave out (ops/sequence/Optional.h).
    onnx::TypeProto *Type = In.mutable_type();
    if (Type->has_optional_type()) {
      Type = Type->mutable_optional_type()->mutable_elem_type();
      if (!Type->has_tensor_type())
        return makeError("input '{}' is an optional {}: cuvil compiles "
                         "optional tensors only",
                         In.name(),
                         Type->has_sequence_type() ? "sequence" : "value");
    }
    if (!Type->has_tensor_type())
      return makeError("input '{}' is not a tensor (a sequence or map): "
                       "cuvil compiles tensor inputs only",
                       In.name());
    // Without a shape the rank is unknown (not 0), and ONNX's shape
    // inference crashes on some operators given one (MaxUnpool: found by
    // tests/fuzz/fuzz_onnx). Initializers listed as inputs (IR < 4) have
    // their shape in the initializer.
    if (!Type->tensor_type().has_shape() && !Initializers.count(In.name()))
      return makeError(
          "graph input '{}' has no shape; cuvil needs the "
          "input shapes: write them into the model (e.g. "
          "onnx.tools.update_model_dims.update_inputs_outputs_dims)",
          In.name());
    auto *Shape = Type->mutable_tensor_type()->mutable_shape();
    for (auto &D : *Shape->mutable_dim()) {
      if (D.has_dim_value() && D.dim_value() < 0)
        return makeError("graph input '{}' has a negative dimension {}",
                         In.name(), D.dim_value());
      if (D.has_dim_value())
        continue;
      std::string P = D.has_dim_param() ? D.dim_param() : "";
      auto It = Opts.DimValues.find(P);
      if (P.empty() || It == Opts.DimValues.end())
        return makeError("input '{}' has a symbolic dimension '{}'; give its "
                         "value with --dim {}=N",
                         In.name(), P.empty() ? "?" : P,
                         P.empty() ? "NAME" : P);
      Used.insert(P);
      D.set_dim_value(It->second);
    }
  }
  for (const auto &[Name, V] : Opts.DimValues)
    if (!Used.count(Name))
      return makeError("--dim {}: the model has no input dimension named '{}'",
                       Name, Name);
  return llvm::Error::success();
}

llvm::Expected<Value *> Importer::addConstant(const onnx::TensorProto &T,
                                              const std::string &Name) {
  auto Ty = mapType(T.data_type());
  if (!Ty)
    return makeError("constant '{}' has unsupported element type {}", Name,
                     typeName(T.data_type()));
  std::vector<int64_t> Shape(T.dims().begin(), T.dims().end());
  auto Count = checkedElementCount(Shape);
  if (!Count)
    return makeError(
        "constant '{}' has {} elements: {}", Name,
        countText(wideElementCount(Shape)),
        std::any_of(Shape.begin(), Shape.end(), [](int64_t D) { return D < 0; })
            ? "a dimension is negative"
            : "more than the target's address space");
  auto Bytes = tensorBytes(T, *Ty, *Count);
  if (!Bytes)
    return Bytes.takeError();
  Value *V = G->addValue(Name, *Ty, Shape, ValueKind::Constant);
  V->setData(std::move(*Bytes));
  Values[Name] = V;
  return V;
}

/// A graph input or node output, typed by the (inferred) value info.
llvm::Expected<Value *> Importer::createValue(const std::string &Name,
                                              const Node *User,
                                              ValueKind Kind) {
  if (Values.count(Name))
    return User ? nodeError(*User, "output '{}' is defined twice", Name)
                : makeError("value '{}' is defined twice", Name);
  auto Info = Infos.find(Name);
  auto Fail = [&](const std::string &Why) -> llvm::Error {
    return User ? nodeError(*User, "output '{}' {}", Name, Why)
                : makeError("value '{}' {}", Name, Why);
  };
  if (Info == Infos.end())
    return Fail("has no type after ONNX shape inference");
  // A graph input of optional type is its tensor (ops/sequence/Optional.h).
  const onnx::TypeProto *Type = &Info->second->type();
  if (Kind == ValueKind::Input && Type->has_optional_type())
    Type = &Type->optional_type().elem_type();
  if (!Type->has_tensor_type())
    return Fail(Type->has_optional_type()
                    ? "is an optional value: cuvil has optional graph "
                      "inputs only, not optional values inside the graph"
                    : "has no tensor type after ONNX shape inference");
  const auto &TT = Type->tensor_type();
  auto Ty = mapType(TT.elem_type());
  if (!Ty)
    return Fail("has unsupported element type " + typeName(TT.elem_type()));
  if (!TT.has_shape()) {
    if (Kind == ValueKind::Input)
      return Fail("has an unknown rank after ONNX shape inference");
    Value *V = G->addValue(Name, *Ty, {UnknownRank}, Kind);
    Values[Name] = V;
    return V;
  }
  // A dimension shape inference left open (e.g. a Reshape whose shape is
  // computed by a Shape -> Gather -> Concat chain) stays UnknownDim until
  // the fold-constants pass resolves it; graph inputs must be static.
  std::vector<int64_t> Shape;
  for (const auto &D : TT.shape().dim()) {
    if (!D.has_dim_value() && Kind == ValueKind::Input)
      return Fail("has a dimension that ONNX shape inference could not "
                  "determine statically");
    Shape.push_back(D.has_dim_value() ? D.dim_value() : UnknownDim);
  }
  Value *V = G->addValue(Name, *Ty, Shape, Kind);
  Values[Name] = V;
  return V;
}

llvm::Error Importer::importNode(const onnx::NodeProto &NP, int Index) {
  std::string Name = NP.name().empty()
                         ? NP.op_type() + "_" + std::to_string(Index)
                         : NP.name();
  const std::string &Domain = NP.domain();
  bool Standard = Domain.empty() || Domain == "ai.onnx";
  if (Domain == InternalDomain)
    return makeError("node '{}' ({}): domain '{}' is reserved for cuvil's "
                     "internal ops, which a model may not use",
                     Name, NP.op_type(), Domain);
  const OpDef *Def = nullptr;
  if (Standard)
    Def = lookupOp(NP.op_type());
  else if (Opts.CustomOps)
    Def = Opts.CustomOps->lookup(Domain, NP.op_type());

  // Constant nodes become constant values directly.
  if (Standard && NP.op_type() == "Constant") {
    for (const auto &A : NP.attribute()) {
      onnx::TensorProto T;
      if (A.name() == "value" && A.has_t()) {
        T = A.t();
      } else if (A.name() == "value_float" || A.name() == "value_floats") {
        T.set_data_type(onnx::TensorProto::FLOAT);
        if (A.name() == "value_float")
          T.add_float_data(A.f());
        else
          T.add_dims(A.floats_size());
        for (float F : A.floats())
          T.add_float_data(F);
      } else if (A.name() == "value_int" || A.name() == "value_ints") {
        T.set_data_type(onnx::TensorProto::INT64);
        if (A.name() == "value_int")
          T.add_int64_data(A.i());
        else
          T.add_dims(A.ints_size());
        for (int64_t I : A.ints())
          T.add_int64_data(I);
      } else {
        continue;
      }
      T.set_name(NP.output(0));
      auto V = addConstant(T, NP.output(0));
      return V.takeError();
    }
    return makeError("node '{}' (Constant): only the value, value_float(s) "
                     "and value_int(s) forms are supported",
                     Name);
  }

  std::vector<Value *> Ins;
  for (const auto &In : NP.input()) {
    if (In.empty()) {
      Ins.push_back(nullptr);
      continue;
    }
    auto It = Values.find(In);
    if (It == Values.end())
      return makeError("node '{}' ({}): input '{}' is not defined before use",
                       Name, NP.op_type(), In);
    Ins.push_back(It->second);
  }
  // Subgraphs without formal inputs (If's branches) are inlined before the
  // node: their nodes run unconditionally (ops have no side effects), and
  // their outputs become extra inputs of the node; attribute NAME then says
  // where: {first input, count}. Subgraphs with formal inputs (Scan, Loop)
  // are dropped; verification rejects their ops.
  std::vector<std::pair<std::string, std::vector<int64_t>>> Inlined;
  for (const auto &A : NP.attribute()) {
    if (A.type() != onnx::AttributeProto::GRAPH || A.g().input_size() != 0)
      continue;
    if (auto E = inlineSubgraph(A.g(), Index))
      return E;
    Inlined.push_back(
        {A.name(), {static_cast<int64_t>(Ins.size()), A.g().output_size()}});
    for (const auto &Out : A.g().output())
      Ins.push_back(Values.at(Out.name()));
  }
  Node *N = G->addNode(NP.op_type(), Name, Def, Ins, {});
  for (auto &[Attr, Where] : Inlined)
    N->setAttr(Attr, std::move(Where));
  if (NP.output_size() > 0)
    if (auto It = Declined.find(NP.output(0)); It != Declined.end())
      N->setUnsupportedReason(It->second); // verification says it
  N->origin().Names.push_back(Name);
  N->origin().Indices.push_back(Index);
  if (std::string Where = sourceLocation(NP.doc_string()); !Where.empty())
    G->setSourceOf(Index, std::move(Where));
  auto OS = Opsets.find(Standard ? "" : Domain);
  N->setOpset(OS == Opsets.end() ? 0 : OS->second);
  if (!Standard)
    N->setDomain(Domain);

  for (const auto &A : NP.attribute()) {
    using AP = onnx::AttributeProto;
    switch (A.type()) {
    case AP::INT: N->setAttr(A.name(), static_cast<int64_t>(A.i())); break;
    case AP::FLOAT: N->setAttr(A.name(), A.f()); break;
    case AP::STRING: N->setAttr(A.name(), A.s()); break;
    case AP::INTS:
      N->setAttr(A.name(),
                 std::vector<int64_t>(A.ints().begin(), A.ints().end()));
      break;
    case AP::FLOATS:
      N->setAttr(A.name(),
                 std::vector<float>(A.floats().begin(), A.floats().end()));
      break;
    case AP::STRINGS:
      N->setAttr(A.name(), std::vector<std::string>(A.strings().begin(),
                                                    A.strings().end()));
      break;
    case AP::TENSOR: {
      // A small tensor attribute (ConstantOfShape's value) becomes
      // NAME.dtype, NAME.shape and NAME.bits (each element's bits,
      // zero-extended): the IR has no tensor attributes.
      auto Ty = mapType(A.t().data_type());
      auto Elements = checkedElementCount(
          std::vector<int64_t>(A.t().dims().begin(), A.t().dims().end()));
      if (!Ty || !Elements || *Elements > 64)
        break;
      int64_t Count = *Elements;
      auto Bytes = tensorBytes(A.t(), *Ty, Count);
      if (!Bytes) {
        llvm::consumeError(Bytes.takeError()); // the op's checks report it
        break;
      }
      std::vector<int64_t> Bits(Count, 0);
      for (int64_t I = 0; I < Count; ++I)
        std::memcpy(&Bits[I], Bytes->data() + I * dtypeSize(*Ty),
                    dtypeSize(*Ty));
      N->setAttr(A.name() + ".dtype", static_cast<int64_t>(*Ty));
      N->setAttr(A.name() + ".shape", std::vector<int64_t>(A.t().dims().begin(),
                                                           A.t().dims().end()));
      N->setAttr(A.name() + ".bits", std::move(Bits));
      break;
    }
    default:
      // Graph attributes were inlined above (then NAME is set) or belong
      // to ops cuvil does not support; verification rejects those.
      break;
    }
  }
  // An attribute of another kind than the op declares would be read as
  // its default: refused here, naming it.
  if (auto E = verifyAttrKinds(*N))
    return E;
  // Outputs keep their ONNX positions (Node::outputAt): one left out ("")
  // is skipped unless the op wants that position as scratch, then it is an
  // internal value the model cannot name.
  uint32_t Scratch = Def ? Def->ScratchOutputs : 0;
  int NumPos = NP.output_size();
  while (NumPos < 32 && (Scratch >> NumPos) != 0)
    ++NumPos;
  std::vector<Value *> Outs;
  std::vector<unsigned> Pos;
  for (int P = 0; P < NumPos; ++P) {
    const std::string Out = P < NP.output_size() ? NP.output(P) : "";
    if (Out.empty()) {
      if (!(Scratch >> P & 1))
        continue;
      std::string Internal = Name + "/scratch" + std::to_string(P);
      while (Values.count(Internal) || Infos.count(Internal))
        Internal += "_";
      DType Ty = !Ins.empty() && Ins[0] ? Ins[0]->dtype() : DType::F32;
      Outs.push_back(
          G->addValue(Internal, Ty, {UnknownRank}, ValueKind::Intermediate));
      Pos.push_back(P);
      continue;
    }
    auto V = createValue(Out, N, ValueKind::Intermediate);
    if (!V)
      return V.takeError();
    Outs.push_back(*V);
    Pos.push_back(P);
  }
  // addNode took no outputs so that createValue could name the node in its
  // errors; attach them now.
  G->setNodeOutputs(N, std::move(Outs), std::move(Pos));
  // ONNX inference applied a declared op's shape rules where it could
  // (CustomSchemas.cpp); a rule the node's shapes break is said here.
  if (const CustomOp *C = customOpOf(Def))
    return applyCustomShapes(*C, *N);
  return llvm::Error::success();
}

llvm::Error Importer::inlineSubgraph(const onnx::GraphProto &Sub, int Index) {
  for (const auto &VI : Sub.value_info())
    Infos[VI.name()] = &VI;
  for (const auto &VI : Sub.output())
    Infos.emplace(VI.name(), &VI); // may name an outer value
  for (const auto &T : Sub.initializer()) {
    auto V = addConstant(T, T.name());
    if (!V)
      return V.takeError();
  }
  for (const auto &NP : Sub.node())
    if (auto E = importNode(NP, Index))
      return E;
  for (const auto &Out : Sub.output())
    if (!Values.count(Out.name()))
      return makeError("subgraph output '{}' of '{}' is not produced by any "
                       "node",
                       Out.name(), Sub.name());
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Graph>> Importer::run() {
  for (const auto &O : M.opset_import())
    Opsets[O.domain() == "ai.onnx" ? "" : O.domain()] = O.version();

  // Versions first: what the checker and inference say about a model of
  // an unknown opset would mislead. Then the graph's structure, named
  // precisely here, before the checker's vaguer messages.
  if (auto E = checkVersions(M))
    return E;
  if (auto E = checkGraphStructure(M.graph()))
    return E;
  std::unique_ptr<onnx::ISchemaRegistry> WithCustom;
  if (Opts.CustomOps)
    WithCustom = customSchemaRegistry(schemaRegistry(), *Opts.CustomOps);
  const onnx::ISchemaRegistry &Registry =
      WithCustom ? *WithCustom : schemaRegistry();
  if (auto E = checkKnownOps(M, Registry))
    return E;
  if (auto E = resolveInputDims())
    return E;
  // Ranks ONNX 1.12's own shape inference assumes without checking (it
  // crashes otherwise): before the first inference, which may be the fill.
  if (auto E = checkRanksOnnxInferenceAssumes(M.graph()))
    return E;
  if (auto E = fillMissingShapes(M, &Registry))
    return E;
  try {
    checkModel(M, Registry);
  } catch (const std::exception &Ex) {
    return makeError("the ONNX checker rejects the model: {}", Ex.what());
  }
  try {
    onnx::ShapeInferenceOptions SO(/*check_type=*/true, /*strict=*/1,
                                   /*data_prop=*/true);
    onnx::shape_inference::InferShapes(M, &Registry, SO);
  } catch (const std::exception &Ex) {
    // Old exporters wrote models the strict inference rejects (an int64
    // Constant before opset 9): infer what it can, leniently; the shapes it
    // leaves open are resolved after constant folding, or reported.
    std::string Strict = Ex.what();
    try {
      onnx::ShapeInferenceOptions SO(/*check_type=*/false, /*strict=*/0,
                                     /*data_prop=*/true);
      onnx::shape_inference::InferShapes(M, &Registry, SO);
    } catch (const std::exception &) {
      return makeError("ONNX shape inference failed: {}", Strict);
    }
  }

  // A Scan with a static trip count, and a Loop whose trip count is known,
  // become plain nodes; their shapes come from a second inference.
  if (auto E = checkLoopBoundNames(M.graph(), Opts.LoopBounds))
    return E;
  if (unrollLoops(M, Declined, Opts.KnownScalars, Opts.LoopBounds,
                  BoundChecks)) {
    try {
      onnx::ShapeInferenceOptions SO(/*check_type=*/false, /*strict=*/0,
                                     /*data_prop=*/true);
      onnx::shape_inference::InferShapes(M, &Registry, SO);
    } catch (const std::exception &Ex) {
      return makeError(
          "ONNX shape inference failed after unrolling Scan or Loop: {}",
          Ex.what());
    }
  }

  const onnx::GraphProto &GP = M.graph();
  std::string GName = GP.name().empty() ? "model" : GP.name();
  G = std::make_unique<Graph>(GName);
  for (const auto &VI : GP.value_info())
    Infos[VI.name()] = &VI;
  for (const auto &VI : GP.output())
    Infos[VI.name()] = &VI;
  for (const auto &VI : GP.input())
    Infos[VI.name()] = &VI;

  for (const auto &T : GP.initializer()) {
    auto V = addConstant(T, T.name());
    if (!V)
      return V.takeError();
  }
  for (const auto &In : GP.input()) {
    if (Values.count(In.name()))
      continue; // an initializer listed as input (IR version < 4 style)
    auto V = createValue(In.name(), nullptr, ValueKind::Input);
    if (!V)
      return V.takeError();
    G->inputs().push_back(*V);
  }

  int Index = 0;
  for (const auto &NP : GP.node())
    if (auto E = importNode(NP, Index++))
      return E;
  addLoopBoundChecks(*G, Values, BoundChecks);
  for (const auto &Out : GP.output()) {
    auto It = Values.find(Out.name());
    if (It == Values.end())
      return makeError("graph output '{}' is not produced by any node",
                       Out.name());
    G->outputs().push_back(It->second);
  }
  if (auto E = G->checkTensorSizes())
    return E;
  return std::move(G);
}

} // namespace

llvm::Expected<std::unique_ptr<Graph>> importOnnx(const std::string &Path,
                                                  const ImportOptions &Opts) {
  // Mapped, not read: a model's weights are most of its bytes (MobileNetV2:
  // 14 MB), and protobuf copies them once more anyway.
  auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!Buffer)
    return makeError("cannot open file: {}", Buffer.getError().message());
  return importOnnxBytes(
      std::string_view((*Buffer)->getBufferStart(), (*Buffer)->getBufferSize()),
      Opts);
}

llvm::Expected<std::unique_ptr<Graph>>
importOnnxBytes(std::string_view Bytes, const ImportOptions &Opts) {
  // Protobuf messages are limited to 2 GiB.
  if (Bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return makeError("the file is larger than 2 GiB, more than an ONNX "
                     "(protobuf) model can hold");
  onnx::ModelProto M;
  if (Bytes.empty() ||
      !M.ParseFromArray(Bytes.data(), static_cast<int>(Bytes.size())))
    return makeError("not an ONNX model (the file does not parse as an ONNX "
                     "ModelProto; is it truncated?)");
  if (!M.has_graph() || M.ir_version() == 0)
    return makeError("not an ONNX model (no graph or IR version)");
  try {
    Importer I(M, Opts);
    return I.run();
  } catch (const std::exception &Ex) {
    return makeError("cannot import the model: {}", Ex.what());
  }
}

} // namespace cuvil
