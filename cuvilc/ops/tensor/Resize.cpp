//===- Resize.cpp - ONNX Resize and Upsample ------------------------------===//
//
// Both lower to one call of cuvil_k_resize_f32. The output shape is static
// (shape inference, or the model's declared output); scales, sizes and roi
// may be constants or run-time inputs. With constants, the output shape is
// checked against them and the per-axis scale is baked into the call; a
// run-time scales tensor is read by the kernel; run-time sizes are what the
// static output shape says they are (a mismatch is the caller's error, as
// for every run-time shape parameter).
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"

#include <cmath>
#include <cstring>
#include <cuvil/kernels.h>

namespace cuvil {
namespace {

// Resize-10 reads only mode; axes (opset 18) matters only when given.
#define RESIZE_ATTRS(X)                                                        \
  X(Mode, "mode", String, "nearest")                                           \
  X(Ctm, "coordinate_transformation_mode", String, "half_pixel")               \
  X(NearestMode, "nearest_mode", String, "round_prefer_floor")                 \
  X(CubicA, "cubic_coeff_a", Float, -0.75f)                                    \
  X(ExcludeOutside, "exclude_outside", Int, 0)                                 \
  X(Antialias, "antialias", Int, 0)                                            \
  X(Extrapolation, "extrapolation_value", Float, 0.0f)                         \
  X(KeepAspectRatioPolicy, "keep_aspect_ratio_policy", String, "stretch")      \
  X(Axes, "axes", Ints, {})
CUVIL_OP_ATTRS(ResizeAttrs, RESIZE_ATTRS)
// scales is an attribute before opset 9, input 1 since.
#define UPSAMPLE_ATTRS(X)                                                      \
  X(Mode, "mode", String, "nearest") X(Scales, "scales", Floats, {})
CUVIL_OP_ATTRS(UpsampleAttrs, UPSAMPLE_ATTRS)

struct ResizePlan {
  const Value *Roi = nullptr;       ///< Read by tf_crop_and_resize only.
  const Value *Scales = nullptr;    ///< A run-time scales tensor, else null.
  std::vector<int64_t> Slot;        ///< Per axis: index in scales/roi, or -1.
  std::vector<int64_t> StaticScale; ///< Per axis: the scale's double bits.
  int64_t NSlots = 0;
  int64_t Mode = CUVIL_RESIZE_NEAREST;
  int64_t Ctm = CUVIL_RESIZE_HALF_PIXEL;
  int64_t NearestMode = CUVIL_RESIZE_ROUND_PREFER_FLOOR;
  int64_t ExcludeOutside = 0, Antialias = 0;
  float CubicA = -0.75f, Extrapolation = 0.0f;
};

/// Index of S in Names, or an error naming the attribute.
llvm::Expected<int64_t> pick(const Node &N, const char *Attr,
                             const std::string &S,
                             std::initializer_list<const char *> Names) {
  int64_t I = 0;
  for (const char *Name : Names) {
    if (S == Name)
      return I;
    ++I;
  }
  return nodeError(N, "{} '{}' is not supported", Attr, S);
}

int64_t doubleBits(double D) {
  int64_t B;
  std::memcpy(&B, &D, 8);
  return B;
}

/// An optional input that is present and not empty.
const Value *given(const Node &N, size_t I) {
  const Value *V = N.input(I);
  return V && V->hasStaticShape() && V->numElements() > 0 ? V : nullptr;
}

/// The attributes of Resize-11 and later.
llvm::Error readAttributes(const Node &N, ResizePlan &P) {
  ResizeAttrs At(N);
  auto Mode = pick(N, "mode", At.Mode, {"nearest", "linear", "cubic"});
  auto Ctm = pick(N, "coordinate_transformation_mode", At.Ctm,
                  {"half_pixel", "pytorch_half_pixel", "align_corners",
                   "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize",
                   "half_pixel_symmetric"});
  auto Nearest =
      pick(N, "nearest_mode", At.NearestMode,
           {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  if (!Mode)
    return Mode.takeError();
  if (!Ctm)
    return Ctm.takeError();
  if (!Nearest)
    return Nearest.takeError();
  P.Mode = *Mode;
  P.Ctm = *Ctm;
  P.NearestMode = *Nearest;
  P.CubicA = At.CubicA;
  P.ExcludeOutside = At.ExcludeOutside != 0;
  P.Antialias = At.Antialias != 0;
  P.Extrapolation = At.Extrapolation;
  return llvm::Error::success();
}

/// Scales given as constants (attribute or initializer): check the output
/// shape they imply.
llvm::Error constantScales(const Node &N, ResizePlan &P,
                           const std::vector<float> &S) {
  const Value *X = N.input(0), *Y = N.output(0);
  std::vector<float> Roi;
  if (P.Ctm == CUVIL_RESIZE_TF_CROP_AND_RESIZE && P.Roi && P.Roi->isConstant())
    Roi.assign(P.Roi->f32(), P.Roi->f32() + P.Roi->numElements());
  for (size_t D = 0; D < X->rank(); ++D) {
    int64_t Sl = P.Slot[D];
    if (Sl < 0)
      continue;
    double Extent = static_cast<double>(X->shape()[D]);
    if (!Roi.empty())
      Extent *= static_cast<double>(Roi[P.NSlots + Sl]) - Roi[Sl];
    bool Check = P.Ctm != CUVIL_RESIZE_TF_CROP_AND_RESIZE || !Roi.empty();
    if (!(S[Sl] > 0))
      return nodeError(N, "scale {} of axis {} is not positive", S[Sl], D);
    if (Check && Y->shape()[D] !=
                     static_cast<int64_t>(std::floor(Extent * double(S[Sl]))))
      return nodeError(N,
                       "output '{}' has extent {} on axis {}, but the "
                       "scale {} gives {}",
                       Y->name(), Y->shape()[D], D, S[Sl],
                       static_cast<int64_t>(std::floor(Extent * S[Sl])));
    P.StaticScale[D] = doubleBits(S[Sl]);
  }
  return llvm::Error::success();
}

/// Sizes (constant or run-time): the scale of each axis.
llvm::Error sizesScales(const Node &N, ResizePlan &P, const Value *Sizes) {
  const Value *X = N.input(0), *Y = N.output(0);
  std::string Policy = ResizeAttrs(N).KeepAspectRatioPolicy;
  if (Sizes->dtype() != DType::I64)
    return nodeError(N, "sizes must be int64");
  std::vector<int64_t> Want(P.NSlots);
  for (size_t D = 0; D < X->rank(); ++D)
    if (P.Slot[D] >= 0)
      Want[P.Slot[D]] = Y->shape()[D];
  if (Sizes->isConstant())
    Want = Sizes->toInt64s();
  if (Policy != "stretch") {
    if (Policy != "not_larger" && Policy != "not_smaller")
      return nodeError(N, "keep_aspect_ratio_policy '{}' is not supported",
                       Policy);
    if (!Sizes->isConstant())
      return nodeError(N,
                       "sizes must be a compile-time constant with "
                       "keep_aspect_ratio_policy '{}'",
                       Policy);
  }
  double Uniform = Policy == "not_larger" ? INFINITY : 0;
  for (size_t D = 0; D < X->rank(); ++D)
    if (P.Slot[D] >= 0) {
      double R = double(Want[P.Slot[D]]) / double(X->shape()[D]);
      Uniform =
          Policy == "not_larger" ? std::min(Uniform, R) : std::max(Uniform, R);
    }
  for (size_t D = 0; D < X->rank(); ++D) {
    if (P.Slot[D] < 0)
      continue;
    int64_t In = X->shape()[D];
    double Scale = double(Want[P.Slot[D]]) / double(In);
    int64_t Out = Want[P.Slot[D]];
    if (Policy != "stretch") {
      Scale = Uniform;
      Out = static_cast<int64_t>(std::floor(Scale * double(In) + 0.5));
    }
    if (Out != Y->shape()[D])
      return nodeError(N,
                       "output '{}' has extent {} on axis {}, but sizes "
                       "give {}",
                       Y->name(), Y->shape()[D], D, Out);
    P.StaticScale[D] = doubleBits(Scale);
  }
  return llvm::Error::success();
}

llvm::Expected<ResizePlan> plan(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X)
    return nodeError(N, "missing input");
  if (X->dtype() != DType::F32 || Y->dtype() != DType::F32)
    return nodeError(N, "element type {} is not supported (float32 only)",
                     dtypeName(X->dtype()));
  size_t R = X->rank();
  if (R == 0 || R > CUVIL_MAX_RANK || Y->rank() != R)
    return nodeError(N, "rank {} is not supported (1 to {})", R,
                     CUVIL_MAX_RANK);
  for (int64_t D : X->shape())
    if (D <= 0)
      return nodeError(N, "empty input '{}' is not supported", X->name());
  ResizePlan P;
  bool Modern = N.opType() == "Resize" && N.opset() >= 11;
  if (Modern) {
    if (auto E = readAttributes(N, P))
      return E;
  } else {
    // Upsample and Resize-10: asymmetric coordinates, nearest rounds down
    // (integral scales repeat each element).
    // (Resize's mode is Upsample's.)
    auto Mode = pick(N, "mode", UpsampleAttrs(N).Mode, {"nearest", "linear"});
    if (!Mode)
      return Mode.takeError();
    P.Mode = *Mode;
    P.Ctm = CUVIL_RESIZE_ASYMMETRIC;
    P.NearestMode = CUVIL_RESIZE_FLOOR;
  }
  // The resized axes (opset 18's axes attribute; all by default).
  std::vector<int64_t> Axes;
  for (size_t D = 0; D < R; ++D)
    Axes.push_back(static_cast<int64_t>(D));
  if (Modern && N.hasAttr("axes")) {
    Axes.clear();
    for (int64_t A : ResizeAttrs(N).Axes) {
      auto Ax = normalizeAxis(N, A, R);
      if (!Ax)
        return Ax.takeError();
      Axes.push_back(*Ax);
    }
  }
  P.NSlots = static_cast<int64_t>(Axes.size());
  P.Slot.assign(R, -1);
  P.StaticScale.assign(R, 0);
  for (size_t I = 0; I < Axes.size(); ++I) {
    if (P.Slot[Axes[I]] >= 0)
      return nodeError(N, "axis {} is repeated in axes", Axes[I]);
    P.Slot[Axes[I]] = static_cast<int64_t>(I);
  }
  for (size_t D = 0; D < R; ++D)
    if (P.Slot[D] < 0 && X->shape()[D] != Y->shape()[D])
      return nodeError(N, "axis {} is not resized but changes extent", D);

  if (P.Ctm == CUVIL_RESIZE_TF_CROP_AND_RESIZE) {
    P.Roi = given(N, 1);
    if (!P.Roi || P.Roi->dtype() != DType::F32 ||
        P.Roi->numElements() != 2 * P.NSlots)
      return nodeError(N,
                       "tf_crop_and_resize needs a float32 roi of {} "
                       "values",
                       2 * P.NSlots);
  }

  // Where the scales come from.
  const Value *Scales = nullptr, *Sizes = nullptr;
  std::vector<float> AttrScales;
  if (Modern) {
    Scales = given(N, 2);
    Sizes = given(N, 3);
  } else if (N.opType() == "Upsample" && N.opset() < 9) {
    AttrScales = UpsampleAttrs(N).Scales;
    if (AttrScales.size() != R)
      return nodeError(N, "the scales attribute must have {} values", R);
  } else {
    Scales = given(N, 1);
  }
  if (Scales && Sizes)
    return nodeError(N, "only one of scales and sizes may be given");
  if (Scales) {
    if (Scales->dtype() != DType::F32 || Scales->numElements() != P.NSlots)
      return nodeError(N, "scales must be {} float32 values", P.NSlots);
    if (Scales->isConstant())
      AttrScales.assign(Scales->f32(), Scales->f32() + P.NSlots);
    else
      P.Scales = Scales;
  }
  if (!AttrScales.empty()) {
    if (auto E = constantScales(N, P, AttrScales))
      return E;
  } else if (Sizes) {
    if (Sizes->numElements() != P.NSlots)
      return nodeError(N, "sizes must have {} values", P.NSlots);
    if (auto E = sizesScales(N, P, Sizes))
      return E;
  } else if (!P.Scales) {
    return nodeError(N, "one of scales and sizes must be given");
  }

  if (P.Antialias && P.Mode != CUVIL_RESIZE_NEAREST) {
    if (P.Scales)
      return nodeError(N, "antialias needs compile-time constant scales");
    for (size_t D = 0; D < R; ++D) {
      double S;
      std::memcpy(&S, &P.StaticScale[D], 8);
      if (P.Slot[D] < 0 || S >= 1)
        continue;
      double Support = P.Mode == CUVIL_RESIZE_LINEAR ? 1 : 2;
      int64_t Lo = static_cast<int64_t>(std::floor(-Support / S)) + 1;
      if (2 - 2 * Lo > CUVIL_RESIZE_MAX_TAPS)
        return nodeError(N,
                         "antialias with scale {} on axis {} is not "
                         "supported (filters of at most {} taps)",
                         S, D, CUVIL_RESIZE_MAX_TAPS);
    }
  }
  return P;
}

llvm::Error verifyResizeOp(const Node &N) {
  auto P = plan(N);
  return P ? llvm::Error::success() : P.takeError();
}

llvm::Error lowerResizeOp(const Node &N, std::vector<KernelCall> &Calls) {
  auto P = plan(N);
  if (!P)
    return P.takeError();
  const Value *X = N.input(0), *Y = N.output(0);
  Calls.push_back(kabi::ResizeF32{.x = X,
                                  .roi = P->Roi,
                                  .scales = P->Scales,
                                  .y = Y,
                                  .rank = static_cast<int64_t>(X->rank()),
                                  .in_dims = X->shape(),
                                  .out_dims = Y->shape(),
                                  .slot = P->Slot,
                                  .n_slots = P->NSlots,
                                  .static_scale = P->StaticScale,
                                  .mode = P->Mode,
                                  .ctm = P->Ctm,
                                  .nearest_mode = P->NearestMode,
                                  .cubic_a = P->CubicA,
                                  .exclude_outside = P->ExcludeOutside,
                                  .antialias = P->Antialias,
                                  .extrapolation_value = P->Extrapolation}
                      .call());
  return llvm::Error::success();
}

// Taps per output element: 1, 2 or 4 per resized axis.
int64_t macsResize(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  int64_t Taps = 1;
  std::string Mode = UpsampleAttrs(N).Mode; // Resize's too
  int64_t PerAxis = Mode == "cubic" ? 4 : Mode == "nearest" ? 1 : 2;
  for (size_t D = 0; D < X->rank() && D < Y->rank(); ++D)
    if (X->shape()[D] != Y->shape()[D])
      Taps *= PerAxis;
  return Y->numElements() * Taps;
}

} // namespace

extern const OpDef ResizeOp = {.Name = "Resize",
                               .Verify = verifyResizeOp,
                               .Lower = lowerResizeOp,
                               .Macs = macsResize,
                               .Traits = NoTraits,
                               .Attrs = ResizeAttrs::Specs};
extern const OpDef UpsampleOp = {.Name = "Upsample",
                                 .Verify = verifyResizeOp,
                                 .Lower = lowerResizeOp,
                                 .Macs = macsResize,
                                 .Traits = NoTraits,
                                 .Attrs = UpsampleAttrs::Specs};

} // namespace cuvil
