//===- Sampling.cpp - ONNX GridSample and RoiAlign
//-------------------------===//
//
// Both sample a float32 N,C,H,W image at coordinates computed at run time
// (the grid; the RoIs and their batch indices), so every input is passed to
// the kernel as a tensor; only attributes are compile-time.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

#define GRIDSAMPLE_ATTRS(X)                                                    \
  X(Mode, "mode", String, "bilinear")                                          \
  X(PaddingMode, "padding_mode", String, "zeros")                              \
  X(AlignCorners, "align_corners", Int, 0)
CUVIL_OP_ATTRS(GridSampleAttrs, GRIDSAMPLE_ATTRS)
// coordinate_transformation_mode's default depends on the opset when
// lowering (see lowerRoi).
#define ROIALIGN_ATTRS(X)                                                      \
  X(Mode, "mode", String, "avg")                                               \
  X(Ctm, "coordinate_transformation_mode", String, "half_pixel")               \
  X(OutputHeight, "output_height", Int, 1)                                     \
  X(OutputWidth, "output_width", Int, 1)                                       \
  X(SamplingRatio, "sampling_ratio", Int, 0)                                   \
  X(SpatialScale, "spatial_scale", Float, 1.0f)
CUVIL_OP_ATTRS(RoiAlignAttrs, ROIALIGN_ATTRS)

struct GridPlan {
  int64_t Mode, Padding, AlignCorners;
};

llvm::Expected<GridPlan> gridPlan(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  const Value *X = N.input(0), *G = N.input(1), *Y = N.output(0);
  if (!X || !G)
    return nodeError(N, "missing input");
  if (X->rank() != 4)
    return nodeError(N, "only 4-D (N, C, H, W) inputs are supported");
  const auto &XS = X->shape();
  if (G->rank() != 4 || G->shape()[0] != XS[0] || G->shape()[3] != 2)
    return nodeError(N, "grid must be [N, H_out, W_out, 2]");
  if (Y->shape() !=
      std::vector<int64_t>{XS[0], XS[1], G->shape()[1], G->shape()[2]})
    return nodeError(N, "output '{}' has an unexpected shape", Y->name());
  GridPlan P;
  GridSampleAttrs At(N);
  // Opset 20 renamed bilinear/bicubic to linear/cubic.
  std::string Mode = At.Mode;
  if (Mode == "bilinear" || Mode == "linear")
    P.Mode = CUVIL_GRID_LINEAR;
  else if (Mode == "nearest")
    P.Mode = CUVIL_GRID_NEAREST;
  else if (Mode == "bicubic" || Mode == "cubic")
    P.Mode = CUVIL_GRID_CUBIC;
  else
    return nodeError(N, "mode '{}' is not supported", Mode);
  std::string Pad = At.PaddingMode;
  if (Pad == "zeros")
    P.Padding = CUVIL_GRID_PAD_ZEROS;
  else if (Pad == "border")
    P.Padding = CUVIL_GRID_PAD_BORDER;
  else if (Pad == "reflection")
    P.Padding = CUVIL_GRID_PAD_REFLECTION;
  else
    return nodeError(N, "padding_mode '{}' is not supported", Pad);
  P.AlignCorners = At.AlignCorners != 0;
  return P;
}

llvm::Error verifyGrid(const Node &N) {
  auto P = gridPlan(N);
  return P ? llvm::Error::success() : P.takeError();
}

llvm::Error lowerGrid(const Node &N, std::vector<KernelCall> &Calls) {
  auto P = gridPlan(N);
  if (!P)
    return P.takeError();
  const auto &XS = N.input(0)->shape();
  const auto &YS = N.output(0)->shape();
  Calls.push_back(kabi::GridSampleF32{.x = N.input(0),
                                      .grid = N.input(1),
                                      .y = N.output(0),
                                      .n = XS[0],
                                      .c = XS[1],
                                      .h = XS[2],
                                      .w = XS[3],
                                      .oh = YS[2],
                                      .ow = YS[3],
                                      .mode = P->Mode,
                                      .padding = P->Padding,
                                      .align_corners = P->AlignCorners}
                      .call());
  return llvm::Error::success();
}

int64_t gridMacs(const Node &N) {
  std::string Mode = GridSampleAttrs(N).Mode;
  int64_t Taps = Mode == "nearest" ? 1 : Mode.find("cubic") == 0 ? 16 : 4;
  return N.output(0)->numElements() * Taps;
}

llvm::Error verifyRoi(const Node &N) {
  const Value *X = N.input(0), *R = N.input(1), *B = N.input(2),
              *Y = N.output(0);
  if (!X || !R || !B)
    return nodeError(N, "missing input");
  if (X->dtype() != DType::F32 || R->dtype() != DType::F32 ||
      Y->dtype() != DType::F32)
    return nodeError(N, "element type {} is not supported (float32 only)",
                     dtypeName(X->dtype()));
  if (B->dtype() != DType::I64)
    return nodeError(N, "batch_indices must be int64");
  if (X->rank() != 4)
    return nodeError(N, "only 4-D (N, C, H, W) inputs are supported");
  if (R->rank() != 2 || R->shape()[1] != 4 || B->rank() != 1 ||
      B->shape()[0] != R->shape()[0])
    return nodeError(N, "rois must be [num_rois, 4] and batch_indices "
                        "[num_rois]");
  RoiAlignAttrs At(N);
  std::string Mode = At.Mode;
  // ONNX Runtime's max mode (the largest weighted corner of any sample,
  // which ORT itself flags as wrong) and the plain max of the samples
  // disagree, and no test settles it: refuse rather than guess.
  if (Mode != "avg")
    return nodeError(N,
                     "mode '{}' is not supported (only 'avg' is "
                     "supported)",
                     Mode);
  std::string Ctm = At.Ctm;
  if (Ctm != "half_pixel" && Ctm != "output_half_pixel")
    return nodeError(N,
                     "coordinate_transformation_mode '{}' is not "
                     "supported",
                     Ctm);
  int64_t OH = At.OutputHeight, OW = At.OutputWidth;
  if (OH <= 0 || OW <= 0 || At.SamplingRatio < 0)
    return nodeError(N, "output_height, output_width and sampling_ratio "
                        "must be positive");
  if (Y->shape() != std::vector<int64_t>{R->shape()[0], X->shape()[1], OH, OW})
    return nodeError(N, "output '{}' has an unexpected shape", Y->name());
  return llvm::Error::success();
}

llvm::Error lowerRoi(const Node &N, std::vector<KernelCall> &Calls) {
  if (auto E = verifyRoi(N))
    return E;
  const auto &XS = N.input(0)->shape();
  const auto &YS = N.output(0)->shape();
  // Before opset 16 RoiAlign had no coordinate_transformation_mode and
  // behaved as output_half_pixel.
  RoiAlignAttrs At(N);
  std::string Ctm = N.hasAttr("coordinate_transformation_mode") ? At.Ctm
                    : N.opset() >= 16                           ? "half_pixel"
                                      : "output_half_pixel";
  Calls.push_back(kabi::RoiAlignF32{.x = N.input(0),
                                    .rois = N.input(1),
                                    .batch_indices = N.input(2),
                                    .y = N.output(0),
                                    .n = XS[0],
                                    .c = XS[1],
                                    .h = XS[2],
                                    .w = XS[3],
                                    .num_rois = YS[0],
                                    .oh = YS[2],
                                    .ow = YS[3],
                                    .sampling_ratio = At.SamplingRatio,
                                    .spatial_scale = At.SpatialScale,
                                    .half_pixel = Ctm == "half_pixel"}
                      .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef GridSampleOp = {.Name = "GridSample",
                                   .Verify = verifyGrid,
                                   .Lower = lowerGrid,
                                   .Macs = gridMacs,
                                   .Traits = NoTraits,
                                   .Attrs = GridSampleAttrs::Specs};
extern const OpDef RoiAlignOp = {.Name = "RoiAlign",
                                 .Verify = verifyRoi,
                                 .Lower = lowerRoi,
                                 .Macs = noMacs,
                                 .Traits = NoTraits,
                                 .Attrs = RoiAlignAttrs::Specs};

} // namespace cuvil
