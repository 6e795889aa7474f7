//===- Packing.h - Weights in the register-blocked kernels' order -*- C++
//-*-===//
//
// The packed Conv and Gemm kernels (runtime-baremetal/kernels/opt) stream
// their weights in panels of P output channels, P being the register block
// of the target's kernel library (cuvil_k_pack_mr). The pack-weights pass
// asks each op's OpDef::PackWeights to rewrite its constant weights into
// that order at compile time; the node becomes the internal op of the
// packed kernel (cuvil.PackedConv, cuvil.PackedGemm, with attribute
// panel = P), which calls it. The packed tensor keeps the
// original's shape and element count (the last panel is narrower when P
// does not divide the channel count), so the memory plan, the blob and the
// op's verification see the same sizes: only the element order changes.
// A weight shared with another node is packed into a new tensor for this
// node only.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_PACKING_H
#define CUVIL_OPS_PACKING_H

#include "ir/Graph.h"
#include "ops/Attrs.h"

namespace cuvil {

/// The name of the packed ops' attribute that holds P.
inline constexpr const char *PanelAttr = "panel";
/// The packed ops' own attribute, for their attribute lists (ops/Attrs.h).
#define CUVIL_PANEL_ATTRS(X) X(Panel, PanelAttr, Int, 0)

/// Conv with group 1 and a constant float32 weight becomes
/// cuvil.PackedConv; a depthwise Conv (one filter per channel) becomes
/// cuvil.DepthwiseConv: its weights are in that kernel's order already.
/// Returns the new node, or null when N stays as it is.
Node *packConvWeights(Graph &G, Node &N, int64_t Panel);
/// Gemm with a constant float32 B (alpha is folded into the packed values)
/// becomes cuvil.PackedGemm.
Node *packGemmWeights(Graph &G, Node &N, int64_t Panel);
/// A new constant holding W (float32, its last two dimensions a row-major
/// [Rows, Taps] matrix per leading index, as an LSTM's [dirs, 4h, n] weights)
/// with every matrix packed as a Gemm's transB operand in panels of Panel
/// rows; the shape stays W's. Named after W.
Value *packMatricesAsTransB(Graph &G, const Value &W, int64_t Panel);

} // namespace cuvil

#endif
