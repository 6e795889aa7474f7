//===- SchemasNewer.cpp - Schemas of opsets 18 to 21 ----------------------===//
//
// Each schema states an operator's inputs, outputs, attributes and type
// constraints as the ONNX specification of that opset does, and a
// type-and-shape inference function. Where a schema only adds to an older
// one (a new attribute, an optional input), it is derived from ONNX 1.12's
// schema of the previous version, whose inference is reused when it still
// holds. Element types ONNX 1.12 cannot name (float8, int4) are left out:
// cuvil compiles none of them.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/SchemaInference.h"
#include "frontend/onnx/Schemas.h"

#include <onnx/defs/schema.h>

#include <set>
#include <string>

namespace cuvil {
namespace {

using onnx::AttributeProto;
using onnx::OpSchema;

const std::vector<std::string> FloatTypes = {
    "tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};

/// A new schema for Op at opset Since in the default domain.
OpSchema fresh(const char *Op, int Since, const char *Doc) {
  OpSchema S(Op, __FILE__, __LINE__);
  S.SetDomain("").SinceVersion(Since).SetDoc(Doc);
  return S;
}

/// Op's schema at opset Since, copied from ONNX 1.12's schema at opset
/// BaseOpset (inputs, outputs, type constraints, inference) except the
/// attributes and type constraints named in Drop; the caller adds what
/// changed.
OpSchema derive(const char *Op, int BaseOpset, int Since,
                const std::set<std::string> &Drop = {}) {
  const OpSchema *B = onnx::OpSchemaRegistry::Schema(Op, BaseOpset, "");
  if (!B)
    fail_schema("cuvil: ONNX has no schema of ", Op, " at opset ", BaseOpset);
  OpSchema S = fresh(Op, Since, "cuvil's schema, derived from ONNX 1.12's.");
  int I = 0;
  for (const auto &P : B->inputs())
    S.Input(I++, P.GetName(), P.GetDescription(), P.GetTypeStr(), P.GetOption(),
            P.GetIsHomogeneous(), P.GetMinArity(),
            P.GetDifferentiationCategory());
  I = 0;
  for (const auto &P : B->outputs())
    S.Output(I++, P.GetName(), P.GetDescription(), P.GetTypeStr(),
             P.GetOption(), P.GetIsHomogeneous(), P.GetMinArity(),
             P.GetDifferentiationCategory());
  for (const auto &[Name, A] : B->attributes())
    if (!Drop.count(Name))
      S.Attr(A);
  for (const auto &T : B->typeConstraintParams())
    if (!Drop.count(T.type_param_str))
      S.TypeConstraint(T.type_param_str, T.allowed_type_strs, T.description);
  S.TypeAndShapeInferenceFunction(B->GetTypeAndShapeInferenceFunction());
  if (B->has_data_propagation_function())
    S.PartialDataPropagationFunction(B->GetDataPropagationFunction());
  return S;
}

/// ReduceMax, ReduceMean, ...: opset 18 moves axes from an attribute to
/// an optional input, as ReduceSum did at 13 (whose inference handles it);
/// ReduceMax and ReduceMin take bool at 20.
void addReductions(std::vector<OpSchema> &Out) {
  const OpSchema *Sum13 = onnx::OpSchemaRegistry::Schema("ReduceSum", 13, "");
  if (!Sum13)
    fail_schema("cuvil: ONNX has no ReduceSum-13 schema");
  for (const char *Op :
       {"ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd", "ReduceSumSquare",
        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
    for (int Since : {18, 20}) {
      bool Bool = Since == 20;
      if (Bool && std::string(Op) != "ReduceMax" &&
          std::string(Op) != "ReduceMin")
        continue;
      std::set<std::string> Drop = {"axes", "keepdims"};
      if (Bool)
        Drop.insert("T");
      OpSchema S = derive(Op, 17, Since, Drop);
      S.Input(1, "axes", "The axes to reduce (all when empty or absent).",
              "tensor(int64)", OpSchema::Optional);
      S.Attr("keepdims", "Keep the reduced dimensions (as 1).",
             AttributeProto::INT, static_cast<int64_t>(1));
      S.Attr("noop_with_empty_axes",
             "With empty axes: 1 is the identity, 0 reduces all axes.",
             AttributeProto::INT, static_cast<int64_t>(0));
      if (Bool) {
        std::vector<std::string> Types =
            onnx::OpSchemaRegistry::Schema(Op, 17, "")
                ->typeConstraintParams()[0]
                .allowed_type_strs;
        Types.push_back("tensor(bool)");
        S.TypeConstraint("T", Types, "Element types.");
      }
      S.TypeAndShapeInferenceFunction(
          Sum13->GetTypeAndShapeInferenceFunction());
      Out.push_back(std::move(S));
    }
  }
}

void addDataMovement(std::vector<OpSchema> &Out) {
  // Split-18: num_outputs splits into equal parts (the last smaller).
  OpSchema Split = derive("Split", 13, 18);
  Split.Attr("num_outputs", "Number of equal parts (without the split input).",
             AttributeProto::INT, false);
  Split.TypeAndShapeInferenceFunction(schemas::inferSplit18);
  Out.push_back(std::move(Split));

  // Pad-18: optional axes input (19 adds mode 'wrap', 21 types).
  OpSchema Pad = derive("Pad", 13, 18);
  Pad.Input(3, "axes", "The axes that pads apply to (all by default).", "Tind",
            OpSchema::Optional);
  Pad.TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"},
                     "Axis index types.");
  Pad.TypeAndShapeInferenceFunction(schemas::inferPad18);
  Out.push_back(std::move(Pad));

  // Resize-18: antialias, axes, keep_aspect_ratio_policy (19 adds the
  // coordinate mode half_pixel_symmetric, a value, not a signature change).
  OpSchema Resize = derive("Resize", 13, 18);
  Resize.Attr("antialias", "Antialiasing filter when downscaling.",
              AttributeProto::INT, static_cast<int64_t>(0));
  Resize.Attr("axes", "The axes that roi, scales and sizes apply to.",
              AttributeProto::INTS, false);
  Resize.Attr("keep_aspect_ratio_policy", "stretch, not_larger or not_smaller.",
              AttributeProto::STRING, std::string("stretch"));
  Resize.TypeAndShapeInferenceFunction(schemas::inferResize18);
  Out.push_back(std::move(Resize));

  // Col2Im-18 (new): [N, C * prod(block), L] -> [N, C, image...].
  OpSchema Col2Im = fresh("Col2Im", 18,
                          "Rearranges column blocks into an "
                          "image (the inverse of Im2Col).");
  Col2Im.Input(0, "input", "[N, C * prod(block_shape), L]", "T")
      .Input(1, "image_shape", "Spatial shape of the image.", "tensor(int64)")
      .Input(2, "block_shape", "Spatial shape of a block.", "tensor(int64)")
      .Output(0, "output", "[N, C, image_shape...]", "T")
      .Attr("dilations", "Dilation per spatial axis.", AttributeProto::INTS,
            false)
      .Attr("pads", "Padding, begins then ends.", AttributeProto::INTS, false)
      .Attr("strides", "Stride per spatial axis.", AttributeProto::INTS, false)
      .TypeConstraint("T", OpSchema::all_tensor_types(), "Any tensor type.")
      .TypeAndShapeInferenceFunction(schemas::inferCol2Im18);
  Out.push_back(std::move(Col2Im));

  // DFT-20: axis moves from an attribute to an optional input (default -2).
  OpSchema Dft = derive("DFT", 17, 20, {"axis"});
  Dft.Input(2, "axis", "The axis of the transform (default -2).",
            "tensor(int64)", OpSchema::Optional);
  Dft.TypeAndShapeInferenceFunction(schemas::inferDft20);
  Out.push_back(std::move(Dft));
}

void addPools(std::vector<OpSchema> &Out) {
  // LpPool-18: dilations and ceil_mode.
  OpSchema Lp = derive("LpPool", 11, 18);
  Lp.Attr("dilations", "Dilation per spatial axis.", AttributeProto::INTS,
          false);
  Lp.Attr("ceil_mode", "Use ceil to compute the output shape.",
          AttributeProto::INT, static_cast<int64_t>(0));
  Lp.TypeAndShapeInferenceFunction(schemas::inferPool);
  Out.push_back(std::move(Lp));
  // AveragePool-19: dilations.
  OpSchema Avg = derive("AveragePool", 11, 19);
  Avg.Attr("dilations", "Dilation per spatial axis.", AttributeProto::INTS,
           false);
  Avg.TypeAndShapeInferenceFunction(schemas::inferPool);
  Out.push_back(std::move(Avg));
}

void addNormalizationAndActivations(std::vector<OpSchema> &Out) {
  // GroupNormalization: scale and bias per group at 18, per channel at 21
  // (which also adds stash_type).
  for (int Since : {18, 21}) {
    OpSchema S = fresh("GroupNormalization", Since,
                       "Normalizes each group of channels.");
    S.Input(0, "X", "[N, C, spatial...]", "T")
        .Input(1, "scale", Since < 21 ? "[num_groups]" : "[C]", "T")
        .Input(2, "bias", Since < 21 ? "[num_groups]" : "[C]", "T")
        .Output(0, "Y", "Same shape as X.", "T")
        .Attr("epsilon", "Added to the variance.", AttributeProto::FLOAT, 1e-5f)
        .Attr("num_groups", "Number of groups; divides C.", AttributeProto::INT,
              true)
        .TypeConstraint("T", FloatTypes, "Float types.")
        .TypeAndShapeInferenceFunction(
            onnx::propagateShapeAndTypeFromFirstInput);
    if (Since >= 21)
      S.Attr("stash_type", "Type of the statistics (1: float).",
             AttributeProto::INT, static_cast<int64_t>(1));
    Out.push_back(std::move(S));
  }
  // Gelu-20: erf form, or the tanh approximation.
  OpSchema Gelu = fresh("Gelu", 20, "Gaussian error linear unit.");
  Gelu.Input(0, "X", "Input.", "T")
      .Output(0, "Y", "Output.", "T")
      .Attr("approximate", "none or tanh.", AttributeProto::STRING,
            std::string("none"))
      .TypeConstraint("T", FloatTypes, "Float types.")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  Out.push_back(std::move(Gelu));
  // Mish-18: x * tanh(softplus(x)).
  OpSchema Mish = fresh("Mish", 18, "x * tanh(softplus(x)).");
  Mish.Input(0, "X", "Input.", "T")
      .Output(0, "Y", "Output.", "T")
      .TypeConstraint("T",
                      {"tensor(float16)", "tensor(float)", "tensor(double)"},
                      "Float types.")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  Out.push_back(std::move(Mish));
}

/// Cast, CastLike and QuantizeLinear gain `saturate` at 19 (it concerns
/// float8 targets only); DequantizeLinear takes float16/bfloat16 scales at
/// 19 (the output has the scale's type); both gain block_size at 21 and
/// QuantizeLinear output_dtype.
void addConversions(std::vector<OpSchema> &Out) {
  for (const char *Op : {"Cast", "CastLike"}) {
    OpSchema S = derive(Op, 17, 19);
    S.Attr("saturate", "float8 conversions saturate.", AttributeProto::INT,
           static_cast<int64_t>(1));
    Out.push_back(std::move(S));
  }
  const std::vector<std::string> QTypes = {"tensor(int8)", "tensor(uint8)",
                                           "tensor(int16)", "tensor(uint16)"};
  const std::vector<std::string> ScaleTypes = {
      "tensor(float)", "tensor(float16)", "tensor(bfloat16)"};
  for (int Since : {19, 21}) {
    OpSchema Q = fresh("QuantizeLinear", Since, "Quantizes x.");
    Q.Input(0, "x", "Input.", "T1")
        .Input(1, "y_scale", "Scale.", "T1")
        .Input(2, "y_zero_point", "Zero point.", "T2", OpSchema::Optional)
        .Output(0, "y", "Quantized output.", "T2")
        .Attr("axis", "Axis of per-axis quantization.", AttributeProto::INT,
              static_cast<int64_t>(1))
        .Attr("saturate", "float8 conversions saturate.", AttributeProto::INT,
              static_cast<int64_t>(1))
        .TypeConstraint("T1",
                        {"tensor(float)", "tensor(float16)", "tensor(bfloat16)",
                         "tensor(int32)"},
                        "Input types.")
        .TypeConstraint("T2",
                        Since < 21 ? std::vector<std::string>{"tensor(int8)",
                                                              "tensor(uint8)"}
                                   : QTypes,
                        "Quantized types.")
        .TypeAndShapeInferenceFunction(schemas::inferQuantize);
    if (Since >= 21) {
      Q.Attr("block_size", "Block size of blocked quantization (0: none).",
             AttributeProto::INT, static_cast<int64_t>(0));
      Q.Attr("output_dtype", "Output type without a zero point.",
             AttributeProto::INT, static_cast<int64_t>(0));
    }
    Out.push_back(std::move(Q));

    OpSchema D = fresh("DequantizeLinear", Since, "Dequantizes x.");
    D.Input(0, "x", "Quantized input.", "T1")
        .Input(1, "x_scale", "Scale.", "T2")
        .Input(2, "x_zero_point", "Zero point.", "T1", OpSchema::Optional)
        .Output(0, "y", "Output, of the scale's type.", "T2")
        .Attr("axis", "Axis of per-axis quantization.", AttributeProto::INT,
              static_cast<int64_t>(1))
        .TypeConstraint(
            "T1",
            Since < 21
                ? std::vector<std::string>{"tensor(int8)", "tensor(uint8)",
                                           "tensor(int32)"}
                : std::vector<std::string>{"tensor(int8)", "tensor(uint8)",
                                           "tensor(int16)", "tensor(uint16)",
                                           "tensor(int32)"},
            "Quantized types.")
        .TypeConstraint("T2", ScaleTypes, "Scale and output types.")
        .TypeAndShapeInferenceFunction(schemas::inferDequantize);
    if (Since >= 21)
      D.Attr("block_size", "Block size of blocked quantization (0: none).",
             AttributeProto::INT, static_cast<int64_t>(0));
    Out.push_back(std::move(D));
  }
}

/// Einsum-12 as ONNX 1.12 states it, but with an inference that gives the
/// output's dimensions (ONNX 1.12's gives its rank only, which leaves every
/// op after an Einsum, a MatMul say, without shapes); it takes precedence
/// over ONNX's schema of the same version.
void addEinsum(std::vector<OpSchema> &Out) {
  OpSchema S = derive("Einsum", 12, 12);
  S.TypeAndShapeInferenceFunction(schemas::inferEinsum);
  Out.push_back(std::move(S));
}

} // namespace

std::vector<onnx::OpSchema> newerSchemas() {
  std::vector<OpSchema> Out;
  addReductions(Out);
  addDataMovement(Out);
  addPools(Out);
  addNormalizationAndActivations(Out);
  addConversions(Out);
  addEinsum(Out);
  return Out;
}

} // namespace cuvil
