//===- SchemaInference.cpp - Shape inference of cuvil's schemas ----------===//
#include "frontend/onnx/SchemaInference.h"

#include "ops/ShapeRules.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace cuvil::schemas {
namespace {

using onnx::InferenceContext;
using onnx::TensorProto;
using onnx::TensorShapeProto;

bool present(InferenceContext &Ctx, size_t I) {
  return I < Ctx.getNumInputs() && Ctx.getInputType(I) != nullptr;
}

/// The values of constant integer input I (an initializer or Constant
/// output), or nothing when it is absent or computed at run time.
std::optional<std::vector<int64_t>> constInts(InferenceContext &Ctx, size_t I) {
  if (!present(Ctx, I))
    return std::nullopt;
  const TensorProto *T = Ctx.getInputData(I);
  if (!T)
    return std::nullopt;
  if (T->data_type() == TensorProto::INT64)
    return onnx::ParseData<int64_t>(T);
  if (T->data_type() == TensorProto::INT32) {
    auto V = onnx::ParseData<int32_t>(T);
    return std::vector<int64_t>(V.begin(), V.end());
  }
  fail_shape_inference("input ", I, " must be int32 or int64");
}

std::optional<std::vector<float>> constFloats(InferenceContext &Ctx, size_t I) {
  if (!present(Ctx, I))
    return std::nullopt;
  const TensorProto *T = Ctx.getInputData(I);
  if (!T || T->data_type() != TensorProto::FLOAT)
    return std::nullopt;
  return onnx::ParseData<float>(T);
}

TensorShapeProto *outputShape(InferenceContext &Ctx, size_t I) {
  return Ctx.getOutputType(I)->mutable_tensor_type()->mutable_shape();
}

/// Output I gets input 0's rank with every dimension open.
void rankOnly(InferenceContext &Ctx, size_t I) {
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  TensorShapeProto *S = outputShape(Ctx, I);
  S->clear_dim();
  for (int D = 0; D < In.dim_size(); ++D)
    S->add_dim();
}

/// Every number these functions compute with stays within +-2^48 (far
/// beyond any tensor cuvil can place), so sums and products of two never
/// overflow; a model's bigger value fails inference with the reason.
constexpr int64_t Limit = int64_t(1) << 48;

int64_t bounded(int64_t V, const char *What) {
  if (V < -Limit || V > Limit)
    fail_shape_inference(What, " ", V, " is out of range");
  return V;
}

/// A dimension an inference function computed: not negative, bounded.
int64_t extent(int64_t V) {
  if (V < 0 || V > Limit)
    fail_shape_inference("the output would have a dimension of ", V);
  return V;
}

int64_t normalizeAxis(int64_t A, int64_t Rank) {
  if (A < -Rank || A >= Rank)
    fail_shape_inference("axis ", A, " is out of range for rank ", Rank);
  return A < 0 ? A + Rank : A;
}

/// floor(In * Scale + Round) as a dimension.
int64_t scaled(int64_t In, double Scale, double Round) {
  double V = std::floor(double(In) * Scale + Round);
  if (!(Scale > 0) || !(V >= 0 && V <= double(Limit)))
    fail_shape_inference("scale ", Scale, " of an extent ", In,
                         " gives no valid extent");
  return static_cast<int64_t>(V);
}

std::vector<int64_t> intsAttr(InferenceContext &Ctx, const char *Name,
                              std::vector<int64_t> Default) {
  const onnx::AttributeProto *A = Ctx.getAttribute(Name);
  if (!A)
    return Default;
  return std::vector<int64_t>(A->ints().begin(), A->ints().end());
}

} // namespace

void inferSplit18(InferenceContext &Ctx) {
  size_t NOut = Ctx.getNumOutputs();
  for (size_t I = 0; I < NOut; ++I)
    onnx::propagateElemTypeFromInputToOutput(Ctx, 0, I);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  int64_t Axis =
      normalizeAxis(onnx::getAttribute(Ctx, "axis", 0), In.dim_size());
  const onnx::AttributeProto *NumOutputs = Ctx.getAttribute("num_outputs");
  if (present(Ctx, 1) && NumOutputs)
    fail_shape_inference("Split takes either the split input or "
                         "num_outputs, not both");
  if (!present(Ctx, 1) && !NumOutputs)
    fail_shape_inference("Split-18 needs the split input or num_outputs");
  if (NumOutputs && NumOutputs->i() != static_cast<int64_t>(NOut))
    fail_shape_inference("num_outputs is ", NumOutputs->i(),
                         " but the node "
                         "has ",
                         NOut, " outputs");
  std::optional<std::vector<int64_t>> Sizes;
  if (present(Ctx, 1)) {
    Sizes = constInts(Ctx, 1);
  } else if (In.dim(Axis).has_dim_value()) {
    int64_t Extent = bounded(In.dim(Axis).dim_value(), "dimension");
    int64_t N = NumOutputs->i();
    if (N < 1)
      fail_shape_inference("num_outputs must be positive, not ", N);
    int64_t Chunk = (Extent + N - 1) / N;
    Sizes.emplace();
    for (int64_t I = 0; I < N; ++I)
      Sizes->push_back(
          std::max<int64_t>(0, std::min(Chunk, Extent - I * Chunk)));
  }
  if (Sizes && Sizes->size() != NOut)
    fail_shape_inference("split has ", Sizes->size(), " entries for ", NOut,
                         " outputs");
  for (size_t I = 0; I < NOut; ++I) {
    TensorShapeProto *S = outputShape(Ctx, I);
    *S = In;
    S->mutable_dim(Axis)->Clear();
    if (Sizes)
      S->mutable_dim(Axis)->set_dim_value(extent((*Sizes)[I]));
  }
}

void inferPad18(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  int64_t R = In.dim_size();
  auto Pads = constInts(Ctx, 1);
  std::optional<std::vector<int64_t>> Axes;
  if (present(Ctx, 3)) {
    Axes = constInts(Ctx, 3);
  } else {
    Axes.emplace();
    for (int64_t D = 0; D < R; ++D)
      Axes->push_back(D);
  }
  if (!Pads || !Axes) {
    rankOnly(Ctx, 0);
    return;
  }
  if (Pads->size() != 2 * Axes->size())
    fail_shape_inference("pads has ", Pads->size(), " entries; ", Axes->size(),
                         " axes need ", 2 * Axes->size());
  std::vector<int64_t> Begin(R, 0), End(R, 0);
  for (size_t K = 0; K < Axes->size(); ++K) {
    int64_t D = normalizeAxis((*Axes)[K], R);
    Begin[D] = bounded((*Pads)[K], "pad");
    End[D] = bounded((*Pads)[K + Axes->size()], "pad");
  }
  TensorShapeProto *S = outputShape(Ctx, 0);
  S->clear_dim();
  for (int64_t D = 0; D < R; ++D) {
    auto *Dim = S->add_dim();
    if (In.dim(D).has_dim_value())
      Dim->set_dim_value(extent(bounded(In.dim(D).dim_value(), "dimension") +
                                Begin[D] + End[D]));
  }
}

void inferResize18(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  int64_t R = In.dim_size();
  std::vector<int64_t> Axes;
  for (int64_t A : intsAttr(Ctx, "axes", {}))
    Axes.push_back(normalizeAxis(A, R));
  if (Axes.empty())
    for (int64_t D = 0; D < R; ++D)
      Axes.push_back(D);
  std::string Policy = onnx::getAttribute(Ctx, "keep_aspect_ratio_policy",
                                          std::string("stretch"));
  std::vector<std::optional<int64_t>> Out(R);
  for (int64_t D = 0; D < R; ++D)
    if (In.dim(D).has_dim_value())
      Out[D] = extent(In.dim(D).dim_value());
  bool Known = true;
  auto Sizes = constInts(Ctx, 3);
  auto Scales = constFloats(Ctx, 2);
  if (Scales && Scales->empty())
    Scales.reset(); // an empty scales input stands for "absent"
  if (present(Ctx, 3) && Sizes) {
    if (Sizes->size() != Axes.size())
      fail_shape_inference("sizes has ", Sizes->size(), " entries for ",
                           Axes.size(), " axes");
    for (int64_t Size : *Sizes)
      if (Size < 1 || Size > Limit)
        fail_shape_inference("sizes must be positive, not ", Size);
    if (Policy == "stretch") {
      for (size_t K = 0; K < Axes.size(); ++K)
        Out[Axes[K]] = (*Sizes)[K];
    } else {
      double Scale = Policy == "not_larger" ? INFINITY : 0;
      for (size_t K = 0; K < Axes.size(); ++K) {
        if (!Out[Axes[K]] || *Out[Axes[K]] == 0)
          return rankOnly(Ctx, 0);
        double Q = double((*Sizes)[K]) / double(*Out[Axes[K]]);
        Scale =
            Policy == "not_larger" ? std::min(Scale, Q) : std::max(Scale, Q);
      }
      for (int64_t A : Axes)
        Out[A] = scaled(*Out[A], Scale, 0.5);
    }
  } else if (Scales) {
    if (Scales->size() != Axes.size())
      fail_shape_inference("scales has ", Scales->size(), " entries for ",
                           Axes.size(), " axes");
    for (size_t K = 0; K < Axes.size(); ++K)
      if (Out[Axes[K]])
        Out[Axes[K]] = scaled(*Out[Axes[K]], (*Scales)[K], 0.0);
  } else {
    Known = false;
  }
  TensorShapeProto *S = outputShape(Ctx, 0);
  S->clear_dim();
  for (int64_t D = 0; D < R; ++D) {
    auto *Dim = S->add_dim();
    if (Known && Out[D])
      Dim->set_dim_value(*Out[D]);
  }
}

void inferCol2Im18(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  auto Image = constInts(Ctx, 1);
  auto Block = constInts(Ctx, 2);
  if (Image && Block && Image->size() != Block->size())
    fail_shape_inference("image_shape and block_shape differ in length");
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  if (In.dim_size() != 3)
    fail_shape_inference("Col2Im's input must have rank 3, not ",
                         In.dim_size());
  TensorShapeProto *S = outputShape(Ctx, 0);
  S->clear_dim();
  *S->add_dim() = In.dim(0);
  auto *C = S->add_dim();
  if (Block && In.dim(1).has_dim_value()) {
    int64_t P = 1;
    for (int64_t B : *Block) {
      if (B < 1 || B > Limit / P)
        fail_shape_inference("block_shape entry ", B, " is out of range");
      P *= B;
    }
    if (P <= 0 || In.dim(1).dim_value() % P != 0)
      fail_shape_inference("input dimension 1 (", In.dim(1).dim_value(),
                           ") is not a multiple of the block size ", P);
    C->set_dim_value(In.dim(1).dim_value() / P);
  }
  if (Image) {
    for (int64_t D : *Image)
      S->add_dim()->set_dim_value(extent(D));
  } else if (present(Ctx, 1) && onnx::hasInputShape(Ctx, 1)) {
    const TensorShapeProto &IS = onnx::getInputShape(Ctx, 1);
    if (IS.dim_size() == 1 && IS.dim(0).has_dim_value() &&
        IS.dim(0).dim_value() <= 8)
      for (int64_t D = 0; D < IS.dim(0).dim_value(); ++D)
        S->add_dim();
  }
}

void inferDft20(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  int64_t R = In.dim_size();
  if (R < 2)
    fail_shape_inference("DFT's input must have rank 2 or more");
  int64_t Axis = -2;
  if (present(Ctx, 2)) {
    auto A = constInts(Ctx, 2);
    if (!A || A->size() != 1)
      return rankOnly(Ctx, 0);
    Axis = (*A)[0];
  }
  Axis = normalizeAxis(Axis, R);
  if (Axis == R - 1)
    fail_shape_inference("DFT's axis cannot be the last (complex) axis");
  std::optional<int64_t> Length;
  if (In.dim(static_cast<int>(Axis)).has_dim_value())
    Length = In.dim(static_cast<int>(Axis)).dim_value();
  if (present(Ctx, 1)) {
    auto L = constInts(Ctx, 1);
    Length =
        L && L->size() == 1 ? std::optional<int64_t>((*L)[0]) : std::nullopt;
  }
  if (Length && (*Length < 1 || *Length > Limit))
    fail_shape_inference("dft_length ", *Length, " is out of range");
  bool Onesided = onnx::getAttribute(Ctx, "onesided", 0) != 0;
  TensorShapeProto *S = outputShape(Ctx, 0);
  *S = In;
  auto *D = S->mutable_dim(static_cast<int>(Axis));
  D->Clear();
  if (Length)
    D->set_dim_value(Onesided ? *Length / 2 + 1 : *Length);
  S->mutable_dim(static_cast<int>(R - 1))->Clear();
  S->mutable_dim(static_cast<int>(R - 1))->set_dim_value(2);
}

void inferPool(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  int64_t R = In.dim_size();
  if (R < 3)
    fail_shape_inference("the input must have rank 3 or more, not ", R);
  size_t N = static_cast<size_t>(R - 2);
  std::vector<int64_t> Kernel = intsAttr(Ctx, "kernel_shape", {});
  if (Kernel.size() != N)
    fail_shape_inference("kernel_shape must have ", N, " entries");
  std::vector<int64_t> Strides =
      intsAttr(Ctx, "strides", std::vector<int64_t>(N, 1));
  std::vector<int64_t> Dils =
      intsAttr(Ctx, "dilations", std::vector<int64_t>(N, 1));
  std::vector<int64_t> Pads =
      intsAttr(Ctx, "pads", std::vector<int64_t>(2 * N, 0));
  if (Strides.size() != N || Dils.size() != N || Pads.size() != 2 * N)
    fail_shape_inference("strides, dilations and pads must match the ", N,
                         " spatial dimensions");
  std::string AutoPad =
      onnx::getAttribute(Ctx, "auto_pad", std::string("NOTSET"));
  bool Ceil = onnx::getAttribute(Ctx, "ceil_mode", 0) != 0;
  TensorShapeProto *S = outputShape(Ctx, 0);
  S->clear_dim();
  *S->add_dim() = In.dim(0);
  *S->add_dim() = In.dim(1);
  for (size_t I = 0; I < N; ++I) {
    auto *Dim = S->add_dim();
    const auto &D = In.dim(static_cast<int>(I + 2));
    if (!D.has_dim_value())
      continue;
    if (Strides[I] <= 0 || Dils[I] <= 0 || Kernel[I] <= 0)
      fail_shape_inference("kernel, strides and dilations must be positive");
    int64_t X = bounded(D.dim_value(), "dimension");
    for (int64_t V : {Kernel[I], Strides[I], Dils[I], Pads[I], Pads[I + N]})
      bounded(V, "window attribute");
    int64_t KEff = (Kernel[I] - 1) * Dils[I] + 1;
    if (KEff > Limit)
      fail_shape_inference("the dilated kernel is too large");
    if (AutoPad == "SAME_UPPER" || AutoPad == "SAME_LOWER") {
      Dim->set_dim_value((X + Strides[I] - 1) / Strides[I]);
      continue;
    }
    int64_t Span =
        AutoPad == "VALID" ? X - KEff : X + Pads[I] + Pads[I + N] - KEff;
    if (Span < 0)
      fail_shape_inference("the window is larger than the padded input");
    Dim->set_dim_value(
        (Ceil ? (Span + Strides[I] - 1) / Strides[I] : Span / Strides[I]) + 1);
  }
}

void inferQuantize(InferenceContext &Ctx) {
  if (present(Ctx, 2)) {
    onnx::propagateElemTypeFromInputToOutput(Ctx, 2, 0);
  } else {
    int64_t T = onnx::getAttribute(Ctx, "output_dtype", 0);
    onnx::updateOutputElemType(
        Ctx, 0, T ? static_cast<int32_t>(T) : TensorProto::UINT8);
  }
  if (onnx::hasInputShape(Ctx, 0))
    onnx::propagateShapeFromInputToOutput(Ctx, 0, 0);
}

void inferDequantize(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 1, 0);
  if (onnx::hasInputShape(Ctx, 0))
    onnx::propagateShapeFromInputToOutput(Ctx, 0, 0);
}

void inferEinsum(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  const onnx::AttributeProto *Eq = Ctx.getAttribute("equation");
  std::vector<std::vector<int64_t>> Shapes;
  for (size_t I = 0; Eq && I < Ctx.getNumInputs(); ++I) {
    if (!onnx::hasInputShape(Ctx, I))
      return;
    Shapes.emplace_back();
    for (const auto &D : onnx::getInputShape(Ctx, I).dim()) {
      if (!D.has_dim_value()) {
        Shapes.clear(); // ONNX 1.12's inference gives the rank at least
        break;
      }
      Shapes.back().push_back(D.dim_value());
    }
    if (Shapes.empty())
      break;
  }
  if (!Eq || Shapes.size() != Ctx.getNumInputs()) {
    const auto *Base = onnx::OpSchemaRegistry::Schema("Einsum", 12, "");
    if (Base)
      Base->GetTypeAndShapeInferenceFunction()(Ctx);
    return;
  }
  auto Out = einsumShape(Eq->s(), Shapes);
  if (!Out)
    fail_shape_inference(llvm::toString(Out.takeError()));
  TensorShapeProto *S = outputShape(Ctx, 0);
  S->clear_dim();
  for (int64_t D : *Out)
    S->add_dim()->set_dim_value(D);
}

} // namespace cuvil::schemas
