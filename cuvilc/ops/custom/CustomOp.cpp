//===- CustomOp.cpp - The shared record hooks of user-declared ops -------===//
#include "ops/custom/CustomOp.h"

#include "ir/Diagnostic.h"
#include "ir/Escape.h"

#include <algorithm>
#include <fmt/ranges.h>
#include <set>

namespace cuvil {
namespace {

llvm::Error verifyCustom(const Node &N);

const CustomOp &declOf(const Node &N) {
  const CustomOp *C = customOpOf(N.def());
  assert(C && "not a custom op's node");
  return *C;
}

bool attrHasKind(const AttrValue &V, CustomAttrKind K) {
  switch (K) {
  case CustomAttrKind::Int: return std::holds_alternative<int64_t>(V);
  case CustomAttrKind::Float: return std::holds_alternative<float>(V);
  case CustomAttrKind::Ints:
    return std::holds_alternative<std::vector<int64_t>>(V);
  case CustomAttrKind::String: return std::holds_alternative<std::string>(V);
  }
  return false;
}

const char *kindName(CustomAttrKind K) {
  switch (K) {
  case CustomAttrKind::Int: return "int";
  case CustomAttrKind::Float: return "float";
  case CustomAttrKind::Ints: return "ints";
  case CustomAttrKind::String: return "string";
  }
  return "?";
}

/// The attribute's value on N, or its declared default.
const AttrValue &attrValue(const Node &N, const CustomAttr &A) {
  auto It = N.attrs().find(A.Name);
  return It != N.attrs().end() ? It->second : A.Default;
}

/// Output Pos's element type on a node whose inputs are Ins' types.
std::optional<DType> outputDType(const CustomOp &C, unsigned Pos,
                                 const Node &N) {
  const CustomTensor &O = C.Outputs[Pos];
  if (!O.DTypeOf)
    return O.DTypes.front();
  const Value *In = N.input(*O.DTypeOf);
  return In ? std::optional(In->dtype()) : std::nullopt;
}

llvm::Error verifyCustom(const Node &N) {
  const CustomOp &C = declOf(N);
  if (N.numInputs() > C.Inputs.size())
    return nodeError(N, "has {} inputs; custom op {} declares {} ({}:{})",
                     N.numInputs(), C.Name, C.Inputs.size(), C.File, C.Line);
  for (size_t I = 0; I < C.Inputs.size(); ++I) {
    const CustomTensor &D = C.Inputs[I];
    const Value *V = N.input(I);
    if (!V) {
      if (!D.Optional)
        return nodeError(N, "input {} '{}' is required", I, D.Name);
      continue;
    }
    if (std::find(D.DTypes.begin(), D.DTypes.end(), V->dtype()) ==
        D.DTypes.end()) {
      std::vector<std::string_view> Names;
      for (DType T : D.DTypes)
        Names.push_back(dtypeName(T));
      return nodeError(N,
                       "input {} '{}' has element type {}; the "
                       "declaration allows {}",
                       I, D.Name, dtypeName(V->dtype()),
                       fmt::join(Names, ", "));
    }
  }
  for (size_t I = 0; I < N.outputs().size(); ++I)
    if (N.outputPos(I) >= C.Outputs.size())
      return nodeError(N, "has output {}; custom op {} declares {}",
                       N.outputPos(I), C.Name, C.Outputs.size());
  for (unsigned P = 0; P < C.Outputs.size(); ++P)
    if (!N.outputAt(P))
      return nodeError(N,
                       "output {} '{}' is left out; the kernel writes "
                       "every output",
                       P, C.Outputs[P].Name);
  for (const auto &[Name, V] : N.attrs()) {
    if (Name.rfind("cuvil.", 0) == 0)
      continue; // the importer's own notes
    const CustomAttr *A = C.attr(Name);
    if (!A)
      return nodeError(N, "attribute '{}' is not declared for custom op {}",
                       Name, C.Name);
    if (!attrHasKind(V, A->Kind))
      return nodeError(N, "attribute '{}' must be of kind {}", Name,
                       kindName(A->Kind));
  }
  for (const CustomAttr &A : C.Attrs)
    if (A.Required && !N.hasAttr(A.Name))
      return nodeError(N, "required attribute '{}' is missing", A.Name);
  for (unsigned P = 0; P < C.Outputs.size(); ++P) {
    const Value *Out = N.outputAt(P);
    auto Want = outputDType(C, P, N);
    if (Want && Out->dtype() != *Want)
      return nodeError(N,
                       "output {} '{}' has element type {}; the "
                       "declaration gives {}",
                       P, Out->name(), dtypeName(Out->dtype()),
                       dtypeName(*Want));
    auto Shape = customOutputShape(C, N, P);
    if (!Shape)
      return Shape.takeError();
    if (*Shape != Out->shape())
      return nodeError(N,
                       "output {} '{}' has shape [{}]; the shape rule "
                       "'{}' gives [{}]",
                       P, Out->name(), fmt::join(Out->shape(), ", "),
                       C.Outputs[P].Shape.Text, fmt::join(*Shape, ", "));
  }
  CustomEnv Env(C, N);
  for (const CustomParam &Param : C.Params) {
    if (!Param.Expr)
      continue;
    auto V = Param.Expr->evaluate(Env.env());
    if (!V)
      return nodeError(N, "kernel parameter: {}",
                       llvm::toString(V.takeError()));
  }
  return llvm::Error::success();
}

llvm::Error lowerCustom(const Node &N, std::vector<KernelCall> &Calls) {
  const CustomOp &C = declOf(N);
  KernelCall K;
  K.Kernel = C.Kernel;
  CustomEnv Env(C, N);
  for (const CustomParam &P : C.Params) {
    switch (P.K) {
    case CustomParam::Kind::Input:
      K.Args.push_back(N.input(P.Index) ? KernelArg::tensor(N.input(P.Index))
                                        : KernelArg::null());
      break;
    case CustomParam::Kind::Output:
      K.Args.push_back(KernelArg::tensor(N.outputAt(P.Index)));
      break;
    case CustomParam::Kind::FloatAttr:
      K.Args.push_back(
          KernelArg::f(std::get<float>(attrValue(N, *C.attr(P.Attr)))));
      break;
    case CustomParam::Kind::IntsAttr:
      K.Args.push_back(KernelArg::array(
          std::get<std::vector<int64_t>>(attrValue(N, *C.attr(P.Attr)))));
      break;
    case CustomParam::Kind::Int: {
      auto V = P.Expr->evaluate(Env.env());
      if (!V)
        return nodeError(N, "kernel parameter: {}",
                         llvm::toString(V.takeError()));
      K.Args.push_back(KernelArg::i(V->value_or(0)));
      break;
    }
    }
  }
  Calls.push_back(std::move(K));
  return llvm::Error::success();
}

int64_t customMacs(const Node &N) {
  const CustomOp &C = declOf(N);
  if (!C.Macs)
    return 0;
  CustomEnv Env(C, N);
  auto V = C.Macs->evaluate(Env.env());
  if (!V) {
    llvm::consumeError(V.takeError());
    return 0;
  }
  return V->value_or(0);
}

} // namespace

const CustomOp *customOpOf(const OpDef *D) {
  // Every declared op's record, and only those, verify with verifyCustom.
  if (!D || D->Verify != verifyCustom)
    return nullptr;
  return reinterpret_cast<const CustomOpRecord *>(D)->Decl;
}

CustomEnv::CustomEnv(const CustomOp &C, const Node &N) : C(C), N(N) {}

const std::vector<int64_t> *CustomEnv::shape(unsigned I) const {
  const Value *V = N.input(I);
  return V ? &V->shape() : nullptr;
}

int64_t CustomEnv::intAttr(const std::string &A) const {
  const CustomAttr *D = C.attr(A);
  assert(D && D->Kind == CustomAttrKind::Int && "checked when declared");
  const AttrValue &V = attrValue(N, *D);
  return std::holds_alternative<int64_t>(V) ? std::get<int64_t>(V) : 0;
}

llvm::Expected<std::vector<int64_t>>
customOutputShape(const CustomOp &C, const Node &N, unsigned Out) {
  CustomEnv Env(C, N);
  auto S = C.Outputs[Out].Shape.evaluate(Env.env());
  if (!S)
    return nodeError(N, "shape rule of output {}: {}", Out,
                     llvm::toString(S.takeError()));
  return S;
}

llvm::Error applyCustomShapes(const CustomOp &C, const Node &N) {
  for (size_t I = 0; I < N.outputs().size(); ++I) {
    Value *Out = N.outputs()[I];
    if (Out->hasStaticShape() || N.outputPos(I) >= C.Outputs.size())
      continue;
    auto S = customOutputShape(C, N, N.outputPos(I));
    if (!S)
      return S.takeError();
    if (std::all_of(S->begin(), S->end(), [](int64_t D) { return D >= 0; }))
      Out->setShape(std::move(*S));
  }
  return llvm::Error::success();
}

const CustomAttr *CustomOp::attr(const std::string &N) const {
  for (const CustomAttr &A : Attrs)
    if (A.Name == N)
      return &A;
  return nullptr;
}

std::string CustomOp::prototype() const {
  std::vector<std::string> Params;
  std::set<std::string> Used;
  auto NamedAs = [&](const std::string &Want, size_t At) {
    std::string Id = Want;
    if (!isSafeCIdentifier(Id) || Used.count(Id))
      Id = fmt::format("p{}", At);
    Used.insert(Id);
    return Id;
  };
  auto TensorType = [](const std::vector<DType> &Ts) -> std::string {
    return Ts.size() == 1 ? std::string(dtypeCType(Ts.front())) : "void";
  };
  for (size_t I = 0; I < this->Params.size(); ++I) {
    const CustomParam &P = this->Params[I];
    auto Named = [&](const std::string &Want, size_t At) {
      return NamedAs(P.Name.empty() ? Want : P.Name, At);
    };
    switch (P.K) {
    case CustomParam::Kind::Input:
      Params.push_back(fmt::format("const {} *{}",
                                   TensorType(Inputs[P.Index].DTypes),
                                   Named(Inputs[P.Index].Name, I)));
      break;
    case CustomParam::Kind::Output: {
      const CustomTensor &O = Outputs[P.Index];
      Params.push_back(fmt::format(
          "{} *{}",
          TensorType(O.DTypeOf ? Inputs[*O.DTypeOf].DTypes : O.DTypes),
          Named(O.Name, I)));
      break;
    }
    case CustomParam::Kind::FloatAttr:
      Params.push_back("float " + Named(P.Attr, I));
      break;
    case CustomParam::Kind::IntsAttr:
      Params.push_back("const int64_t *" + Named(P.Attr, I));
      break;
    case CustomParam::Kind::Int: {
      // attr.NAME is called NAME; other expressions pI.
      const ShapeExpr::Tree &T = P.Expr->tree();
      Params.push_back("int64_t " +
                       Named(T.K == ShapeExpr::Kind::Attr ? T.Attr : "", I));
      break;
    }
    }
  }
  std::string List = Params.empty()
                         ? std::string("void")
                         : fmt::format("{}", fmt::join(Params, ", "));
  return fmt::format("void {}({})", Kernel, List);
}

void CustomOpSet::add(std::unique_ptr<CustomOp> Op) {
  CustomOp &C = *Op;
  C.Record.Def = OpDef{C.Name.c_str(), verifyCustom, lowerCustom, customMacs,
                       C.InPlace ? InPlace : NoTraits};
  C.Record.Decl = &C;
  bool New = Registry.add(C.Domain, C.Name, &C.Record.Def);
  assert(New && "duplicates are refused when declared");
  (void)New;
  Ops.push_back(std::move(Op));
}

} // namespace cuvil
