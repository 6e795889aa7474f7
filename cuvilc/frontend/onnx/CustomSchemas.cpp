//===- CustomSchemas.cpp - ONNX schemas of user-declared ops -------------===//
#include "frontend/onnx/CustomSchemas.h"

#include "ops/custom/CustomOp.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <fmt/format.h>
#include <map>

namespace cuvil {
namespace {

/// ONNX's name of an element type in a type constraint.
const char *onnxTypeString(DType T) {
  switch (T) {
  case DType::F32: return "tensor(float)";
  case DType::F16: return "tensor(float16)";
  case DType::BF16: return "tensor(bfloat16)";
  case DType::I8: return "tensor(int8)";
  case DType::U8: return "tensor(uint8)";
  case DType::I16: return "tensor(int16)";
  case DType::U16: return "tensor(uint16)";
  case DType::I32: return "tensor(int32)";
  case DType::U32: return "tensor(uint32)";
  case DType::I64: return "tensor(int64)";
  case DType::U64: return "tensor(uint64)";
  case DType::Bool: return "tensor(bool)";
  case DType::F64: return "tensor(double)";
  }
  return "tensor(float)";
}

int32_t onnxElemType(DType T) {
  using TP = onnx::TensorProto;
  switch (T) {
  case DType::F32: return TP::FLOAT;
  case DType::F16: return TP::FLOAT16;
  case DType::BF16: return TP::BFLOAT16;
  case DType::I8: return TP::INT8;
  case DType::U8: return TP::UINT8;
  case DType::I16: return TP::INT16;
  case DType::U16: return TP::UINT16;
  case DType::I32: return TP::INT32;
  case DType::U32: return TP::UINT32;
  case DType::I64: return TP::INT64;
  case DType::U64: return TP::UINT64;
  case DType::Bool: return TP::BOOL;
  case DType::F64: return TP::DOUBLE;
  }
  return TP::FLOAT;
}

/// The declared rules, applied to what inference knows of a node: dtypes
/// always; each output's shape when every input it reads has a shape. A
/// rule that fails (an axis out of range...) leaves the shape open: the
/// op's verification reports it with the node's name.
void inferCustom(const CustomOp &C, onnx::InferenceContext &Ctx) {
  std::vector<std::optional<std::vector<int64_t>>> Shapes(Ctx.getNumInputs());
  bool AllShaped = true;
  for (size_t I = 0; I < Ctx.getNumInputs(); ++I) {
    if (!Ctx.getInputType(I))
      continue; // an absent optional input
    if (!onnx::hasInputShape(Ctx, I)) {
      AllShaped = false;
      continue;
    }
    std::vector<int64_t> S;
    for (const auto &D : onnx::getInputShape(Ctx, I).dim())
      S.push_back(D.has_dim_value() ? D.dim_value() : -1);
    Shapes[I] = std::move(S);
  }
  ShapeExpr::Env Env{[&](unsigned I) -> const std::vector<int64_t> * {
                       return I < Shapes.size() && Shapes[I] ? &*Shapes[I]
                                                             : nullptr;
                     },
                     [&](const std::string &Name) -> int64_t {
                       if (const auto *A = Ctx.getAttribute(Name);
                           A && A->type() == onnx::AttributeProto::INT)
                         return A->i();
                       const CustomAttr *D = C.attr(Name);
                       return D && std::holds_alternative<int64_t>(D->Default)
                                  ? std::get<int64_t>(D->Default)
                                  : 0;
                     }};
  for (size_t O = 0; O < C.Outputs.size() && O < Ctx.getNumOutputs(); ++O) {
    const CustomTensor &D = C.Outputs[O];
    if (D.DTypeOf)
      onnx::propagateElemTypeFromInputToOutput(Ctx, *D.DTypeOf, O);
    else
      onnx::updateOutputElemType(Ctx, O, onnxElemType(D.DTypes.front()));
    if (!AllShaped)
      continue;
    auto S = D.Shape.evaluate(Env);
    if (!S) {
      llvm::consumeError(S.takeError());
      continue;
    }
    auto *Shape = Ctx.getOutputType(O)->mutable_tensor_type()->mutable_shape();
    Shape->clear_dim();
    for (int64_t X : *S) {
      auto *Dim = Shape->add_dim();
      if (X >= 0)
        Dim->set_dim_value(X);
    }
  }
}

onnx::OpSchema schemaOf(const CustomOp &C) {
  onnx::OpSchema S(C.Name, C.File, static_cast<int>(C.Line));
  S.SetDomain(C.Domain).SinceVersion(1).SetDoc("declared with --custom-ops");
  for (size_t I = 0; I < C.Inputs.size(); ++I) {
    const CustomTensor &D = C.Inputs[I];
    std::string T = fmt::format("T{}", I);
    S.Input(static_cast<int>(I), D.Name, "", T,
            D.Optional ? onnx::OpSchema::Optional : onnx::OpSchema::Single);
    std::vector<std::string> Types;
    for (DType Ty : D.DTypes)
      Types.push_back(onnxTypeString(Ty));
    S.TypeConstraint(T, Types, "");
  }
  for (size_t O = 0; O < C.Outputs.size(); ++O) {
    const CustomTensor &D = C.Outputs[O];
    std::string T =
        D.DTypeOf ? fmt::format("T{}", *D.DTypeOf) : fmt::format("O{}", O);
    S.Output(static_cast<int>(O), D.Name, "", T);
    if (!D.DTypeOf)
      S.TypeConstraint(T, {onnxTypeString(D.DTypes.front())}, "");
  }
  for (const CustomAttr &A : C.Attrs) {
    using AP = onnx::AttributeProto;
    AP::AttributeType Ty = A.Kind == CustomAttrKind::Int     ? AP::INT
                           : A.Kind == CustomAttrKind::Float ? AP::FLOAT
                           : A.Kind == CustomAttrKind::Ints  ? AP::INTS
                                                             : AP::STRING;
    S.Attr(A.Name, "", Ty, A.Required);
  }
  S.TypeAndShapeInferenceFunction(
      [&C](onnx::InferenceContext &Ctx) { inferCustom(C, Ctx); });
  S.Finalize();
  return S;
}

/// Base, and the declared ops of their own domains on top.
class CustomRegistry final : public onnx::ISchemaRegistry {
public:
  CustomRegistry(const onnx::ISchemaRegistry &Base, const RuntimeOps &Ops)
      : Base(Base) {
    for (const OpDef *D : Ops.defs())
      if (const CustomOp *C = customOpOf(D))
        Own.emplace(std::make_pair(C->Domain, C->Name), schemaOf(*C));
  }

  const onnx::OpSchema *GetSchema(const std::string &Op, const int Version,
                                  const std::string &Domain) const override {
    auto It = Own.find({Domain, Op});
    return It != Own.end() ? &It->second : Base.GetSchema(Op, Version, Domain);
  }

private:
  const onnx::ISchemaRegistry &Base;
  std::map<std::pair<std::string, std::string>, onnx::OpSchema> Own;
};

} // namespace

std::unique_ptr<onnx::ISchemaRegistry>
customSchemaRegistry(const onnx::ISchemaRegistry &Base, const RuntimeOps &Ops) {
  return std::make_unique<CustomRegistry>(Base, Ops);
}

} // namespace cuvil
