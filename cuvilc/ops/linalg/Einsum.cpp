//===- Einsum.cpp - ONNX Einsum (opset 12+) -------------------------------===//
//
// The equation ("bij,bjk->bik", "...ii->...i", implicit "ij,jk") is parsed
// and bound to the input shapes here, once for verification, shape
// resolution, lowering and the MAC count, so they cannot disagree. Labels
// are letters; an ellipsis stands for the same trailing-aligned, numpy
// broadcast dimensions in every operand; a letter repeated in one operand
// takes its diagonal; a label absent from the output is summed. Without
// "->" the output is the ellipsis, then the letters that occur once, in
// ASCII order.
//
// A float32 equation of two operands that is a (batched) matrix product up
// to relabeling, where each operand's matrix is dense (e.g. "ij,jk->ik",
// "bhqd,bhkd->bhqk"), calls the matrix-product kernels: cuvil_k_gemm_f32
// without batch labels, cuvil_k_matmul_f32 with them, or
// cuvil_k_einsum_bmm_f32 when an operand is transposed. Anything else calls
// the general strided kernel cuvil_k_einsum_{f32,f64}, whose bounds are
// CUVIL_EINSUM_MAX_INPUTS operands and CUVIL_EINSUM_MAX_LABELS labels.
//
//===----------------------------------------------------------------------===//
#include "ir/CheckedMath.h"
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <cuvil/kernels.h>

#include <algorithm>
#include <fmt/ranges.h>
#include <iterator>
#include <limits>
#include <map>
#include <optional>

namespace cuvil {
namespace {

/// One operand's subscripts: its letters, and the position among them
/// before which "..." stands (-1: none).
struct Term {
  std::string Letters;
  int Ellipsis = -1;
};

/// The parsed equation, not yet bound to shapes.
struct Equation {
  std::vector<Term> Inputs;
  Term Output;
};

bool isLabel(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z');
}

/// Parses one term of equation Eq; Where names it in messages ("operand
/// 1", "the output").
llvm::Expected<Term> parseTerm(const std::string &Eq, const std::string &S,
                               const std::string &Where) {
  Term T;
  for (size_t I = 0; I < S.size(); ++I) {
    if (isLabel(S[I])) {
      T.Letters += S[I];
      continue;
    }
    if (S.compare(I, 3, "...") != 0)
      return makeError("equation '{}': '{}' in {} is not a label (labels "
                       "are the letters a-z and A-Z) nor part of '...'",
                       printable(Eq), printable(std::string(1, S[I])), Where);
    if (T.Ellipsis >= 0)
      return makeError("equation '{}': {} has more than one '...'",
                       printable(Eq), Where);
    T.Ellipsis = static_cast<int>(T.Letters.size());
    I += 2;
  }
  return T;
}

llvm::Expected<Equation> parseEquation(const std::string &Eq) {
  std::string S;
  for (char C : Eq)
    if (C != ' ' && C != '\t' && C != '\n' && C != '\r')
      S += C;
  size_t Arrow = S.find("->");
  if (Arrow != std::string::npos &&
      S.find("->", Arrow + 2) != std::string::npos)
    return makeError("equation '{}' has more than one '->'", printable(Eq));
  std::string Lhs = S.substr(0, Arrow);
  Equation E;
  for (size_t From = 0;;) {
    size_t Comma = Lhs.find(',', From);
    std::string Where = fmt::format("operand {}", E.Inputs.size());
    auto T = parseTerm(Eq, Lhs.substr(From, Comma - From), Where);
    if (!T)
      return T.takeError();
    E.Inputs.push_back(std::move(*T));
    if (Comma == std::string::npos)
      break;
    From = Comma + 1;
  }
  std::map<char, int> Count;
  bool AnyEllipsis = false;
  for (const Term &T : E.Inputs) {
    AnyEllipsis |= T.Ellipsis >= 0;
    for (char C : T.Letters)
      ++Count[C];
  }
  if (Arrow == std::string::npos) {
    // Implicit output: '...' first, then the letters used once, sorted (the
    // map orders them by ASCII: upper case before lower case).
    E.Output.Ellipsis = AnyEllipsis ? 0 : -1;
    for (auto [C, K] : Count)
      if (K == 1)
        E.Output.Letters += C;
    return E;
  }
  auto Out = parseTerm(Eq, S.substr(Arrow + 2), "the output");
  if (!Out)
    return Out.takeError();
  for (size_t I = 0; I < Out->Letters.size(); ++I) {
    char C = Out->Letters[I];
    if (!Count.count(C))
      return makeError("equation '{}': output label '{}' does not appear in "
                       "any operand",
                       printable(Eq), C);
    if (Out->Letters.find(C, I + 1) != std::string::npos)
      return makeError("equation '{}': output label '{}' appears more than "
                       "once",
                       printable(Eq), C);
  }
  E.Output = std::move(*Out);
  return E;
}

using Shape = std::vector<int64_t>;

/// The equation bound to the input shapes. Labels are numbered with the
/// output's first (in its order), then the summed ones by first appearance.
struct Contraction {
  size_t NumOut = 0;
  std::vector<int64_t> Extent;               ///< Per label.
  std::vector<std::vector<int>> Dims;        ///< Per operand: each dim's label.
  std::vector<std::vector<int64_t>> Strides; ///< Per operand, per label.
  std::vector<int64_t> OutShape;
};

/// Binds equation Eq to operands of shapes In, named Names in messages
/// (when given).
llvm::Expected<Contraction> bindShapes(const std::string &Eq,
                                       const std::vector<Shape> &In,
                                       const std::vector<std::string> &Names) {
  auto Input = [&](size_t P) {
    return Names.empty() ? fmt::format("input {}", P)
                         : fmt::format("input {} ('{}')", P, Names[P]);
  };
  auto E = parseEquation(Eq);
  if (!E)
    return E.takeError();
  if (E->Inputs.size() != In.size())
    return makeError("equation '{}' has {} operands but the node has {} "
                     "inputs",
                     printable(Eq), E->Inputs.size(), In.size());
  // Symbols: a letter is its code (< 128); dimension k of the ellipsis,
  // counted from the right, is 128 + k.
  std::vector<std::vector<int>> Sym(E->Inputs.size());
  size_t EllRank = 0;
  for (size_t P = 0; P < E->Inputs.size(); ++P) {
    const Term &T = E->Inputs[P];
    size_t L = T.Letters.size(), Rank = In[P].size();
    if (T.Ellipsis < 0 ? Rank != L : Rank < L)
      return makeError("equation '{}': {} has rank {} but its subscripts "
                       "'{}' name {}{} dimensions",
                       printable(Eq), Input(P), Rank, T.Letters,
                       T.Ellipsis < 0 ? "" : "at least ", L);
    size_t Ell = Rank - L;
    EllRank = std::max(EllRank, Ell);
    for (size_t I = 0; I < L; ++I) {
      if (static_cast<int>(I) == T.Ellipsis)
        for (size_t K = Ell; K-- > 0;)
          Sym[P].push_back(128 + static_cast<int>(K));
      Sym[P].push_back(T.Letters[I]);
    }
    if (T.Ellipsis == static_cast<int>(L))
      for (size_t K = Ell; K-- > 0;)
        Sym[P].push_back(128 + static_cast<int>(K));
  }
  const Term &O = E->Output;
  if (O.Ellipsis < 0 && EllRank > 0)
    return makeError("equation '{}': '...' covers {} dimensions but the "
                     "output has no '...' to keep them",
                     printable(Eq), EllRank);
  std::vector<int> OutSym;
  for (size_t I = 0; I <= O.Letters.size(); ++I) {
    if (static_cast<int>(I) == O.Ellipsis)
      for (size_t K = EllRank; K-- > 0;)
        OutSym.push_back(128 + static_cast<int>(K));
    if (I < O.Letters.size())
      OutSym.push_back(O.Letters[I]);
  }
  // Extents: equal, or 1 broadcast against the others.
  auto SymName = [](int S) {
    return S < 128
               ? fmt::format("label '{}'", static_cast<char>(S))
               : fmt::format("'...' dimension {} (from the right)", S - 127);
  };
  std::map<int, int64_t> Size;
  std::map<int, size_t> First; // the operand that fixed the size
  for (size_t P = 0; P < Sym.size(); ++P)
    for (size_t D = 0; D < Sym[P].size(); ++D) {
      int S = Sym[P][D];
      int64_t X = In[P][D];
      auto It = Size.find(S);
      if (It == Size.end() || It->second == 1) {
        Size[S] = X;
        First[S] = P;
      } else if (X != 1 && X != It->second) {
        return makeError("equation '{}': {} is {} in {} but {} in {}",
                         printable(Eq), SymName(S), It->second, Input(First[S]),
                         X, Input(P));
      }
    }
  std::vector<int> Order = OutSym;
  for (const auto &S : Sym)
    for (int X : S)
      if (std::find(Order.begin(), Order.end(), X) == Order.end())
        Order.push_back(X);
  Contraction C;
  C.NumOut = OutSym.size();
  for (int S : Order)
    C.Extent.push_back(Size[S]);
  C.OutShape.assign(C.Extent.begin(), C.Extent.begin() + C.NumOut);
  for (size_t P = 0; P < Sym.size(); ++P) {
    std::vector<int64_t> Dense = denseStrides(In[P]);
    C.Dims.emplace_back();
    C.Strides.emplace_back(Order.size(), 0);
    for (size_t D = 0; D < Sym[P].size(); ++D) {
      int L = static_cast<int>(
          std::find(Order.begin(), Order.end(), Sym[P][D]) - Order.begin());
      C.Dims[P].push_back(L);
      if (In[P][D] == C.Extent[L]) // else 1: broadcast
        C.Strides[P][L] += Dense[D];
    }
  }
  return C;
}

#define EINSUM_ATTRS(X) X(Equation, "equation", String, "")
CUVIL_OP_ATTRS(EinsumAttrs, EINSUM_ATTRS)

/// N's equation bound to its inputs; errors name the node.
llvm::Expected<Contraction> bind(const Node &N) {
  if (!N.hasAttr("equation"))
    return nodeError(N, "the equation attribute is missing");
  std::vector<Shape> In;
  std::vector<std::string> Names;
  for (size_t P = 0; P < N.numInputs(); ++P) {
    if (!N.input(P))
      return nodeError(N, "input {} is missing", P);
    In.push_back(N.input(P)->shape());
    Names.push_back(N.input(P)->name());
  }
  auto C = bindShapes(EinsumAttrs(N).Equation, In, Names);
  if (!C)
    return nodeError(N, "{}", llvm::toString(C.takeError()));
  return C;
}

/// A two-operand float32 contraction as a (batched) matrix product
/// op(A) [M, K] x op(B) [K, N] with dense matrices.
struct GemmPlan {
  bool Swap = false; ///< A is input 1, B input 0.
  int64_t M = 1, N = 1, K = 1;
  bool TransA = false, TransB = false;
  size_t NumBatch = 0;
  std::vector<int64_t> Batch, AStride, BStride; // CUVIL_MATMUL_BATCH_RANK
};

/// Whether the labels Group are, in this order, the dimensions of operand
/// Dims from position At on, each of full extent in Shape.
bool groupAt(const Contraction &C, const std::vector<int> &Dims,
             const std::vector<int64_t> &Shape, size_t At,
             const std::vector<int> &Group) {
  for (size_t I = 0; I < Group.size(); ++I)
    if (Dims[At + I] != Group[I] || Shape[At + I] != C.Extent[Group[I]])
      return false;
  return true;
}

/// Operand Dims as [batch..., G1..., G2...]: true if it is, with Trans set
/// when G1 is Second rather than First.
bool matrixSuffix(const Contraction &C, const std::vector<int> &Dims,
                  const std::vector<int64_t> &Shape,
                  const std::vector<int> &First, const std::vector<int> &Second,
                  bool &Trans) {
  size_t At = Dims.size() - First.size() - Second.size();
  Trans = false;
  if (groupAt(C, Dims, Shape, At, First) &&
      groupAt(C, Dims, Shape, At + First.size(), Second))
    return true;
  Trans = true;
  return groupAt(C, Dims, Shape, At, Second) &&
         groupAt(C, Dims, Shape, At + Second.size(), First);
}

std::optional<GemmPlan> gemmPlan(const Node &Nd, const Contraction &C) {
  if (C.Dims.size() != 2 || Nd.output(0)->dtype() != DType::F32)
    return std::nullopt;
  GemmPlan G;
  std::vector<int> DA = C.Dims[0], DB = C.Dims[1];
  auto Has = [](const std::vector<int> &D, int L) {
    return std::count(D.begin(), D.end(), L);
  };
  enum Role { Batch, MRole, NRole, KRole };
  std::vector<Role> R(C.Extent.size());
  for (int L = 0; L < static_cast<int>(R.size()); ++L) {
    auto InA = Has(DA, L), InB = Has(DB, L);
    if (InA > 1 || InB > 1)
      return std::nullopt; // a diagonal
    bool Out = static_cast<size_t>(L) < C.NumOut;
    if (!Out && !(InA && InB))
      return std::nullopt; // summed within one operand
    R[L] = !Out ? KRole : InA && InB ? Batch : InA ? MRole : NRole;
  }
  // The output: [batch..., M group, N group]; [.., N, M] swaps A and B.
  size_t NB = 0;
  while (NB < C.NumOut && R[NB] == Batch)
    ++NB;
  std::vector<int> MG, NG, KG;
  for (size_t L = NB; L < C.NumOut; ++L) {
    if (R[L] == Batch)
      return std::nullopt;
    (R[L] == MRole ? MG : NG).push_back(static_cast<int>(L));
  }
  if (!MG.empty() && !NG.empty() && R[NB] == NRole) {
    G.Swap = true;
    std::swap(DA, DB);
    std::swap(MG, NG);
  }
  for (size_t I = 0; I < MG.size(); ++I)
    if (MG[I] != static_cast<int>(NB + I))
      return std::nullopt; // M and N labels interleave
  for (int L : DA)
    if (R[L] == KRole)
      KG.push_back(L);
  const auto &SA = Nd.input(G.Swap ? 1 : 0)->shape();
  const auto &SB = Nd.input(G.Swap ? 0 : 1)->shape();
  if (!matrixSuffix(C, DA, SA, MG, KG, G.TransA) ||
      !matrixSuffix(C, DB, SB, KG, NG, G.TransB) ||
      NB > CUVIL_MATMUL_BATCH_RANK)
    return std::nullopt;
  for (int L : MG)
    G.M *= C.Extent[L];
  for (int L : NG)
    G.N *= C.Extent[L];
  for (int L : KG)
    G.K *= C.Extent[L];
  G.NumBatch = NB;
  G.Batch.assign(CUVIL_MATMUL_BATCH_RANK, 1);
  G.AStride.assign(CUVIL_MATMUL_BATCH_RANK, 0);
  G.BStride.assign(CUVIL_MATMUL_BATCH_RANK, 0);
  const auto &StA = C.Strides[G.Swap ? 1 : 0], &StB = C.Strides[G.Swap ? 0 : 1];
  for (size_t L = 0; L < NB; ++L) {
    size_t Slot = CUVIL_MATMUL_BATCH_RANK - NB + L;
    G.Batch[Slot] = C.Extent[L];
    G.AStride[Slot] = StA[L];
    G.BStride[Slot] = StB[L];
  }
  return G;
}

/// The supported element types: every operand and the output alike.
llvm::Error checkTypes(const Node &N) {
  DType T = N.output(0)->dtype();
  if (T != DType::F32 && T != DType::F64)
    return nodeError(N,
                     "output '{}' has element type {}; Einsum supports "
                     "f32 and f64",
                     N.output(0)->name(), dtypeName(T));
  for (const Value *X : N.inputs())
    if (X && X->dtype() != T)
      return nodeError(N, "input '{}' has element type {}, the output {}",
                       X->name(), dtypeName(X->dtype()), dtypeName(T));
  return llvm::Error::success();
}

llvm::Error verifyEinsumOp(const Node &N) {
  if (auto E = checkTypes(N))
    return E;
  auto C = bind(N);
  if (!C)
    return C.takeError();
  const Value *Y = N.output(0);
  std::string Equation = printable(EinsumAttrs(N).Equation);
  if (Y->shape() != C->OutShape)
    return nodeError(N,
                     "output '{}' has shape [{}] but equation '{}' gives "
                     "[{}]",
                     Y->name(), fmt::join(Y->shape(), ", "), Equation,
                     fmt::join(C->OutShape, ", "));
  if (!checkedElementCount(C->Extent))
    return nodeError(N, "equation '{}' sums more than 2^63 products", Equation);
  if (gemmPlan(N, *C))
    return llvm::Error::success();
  if (N.numInputs() > CUVIL_EINSUM_MAX_INPUTS)
    return nodeError(N, "{} operands; at most {} are supported", N.numInputs(),
                     CUVIL_EINSUM_MAX_INPUTS);
  if (C->Extent.size() > CUVIL_EINSUM_MAX_LABELS)
    return nodeError(N,
                     "equation '{}' has {} distinct labels (each "
                     "dimension of '...' counts as one); at most {} are "
                     "supported",
                     Equation, C->Extent.size(), CUVIL_EINSUM_MAX_LABELS);
  return llvm::Error::success();
}

llvm::Error lowerEinsumOp(const Node &N, std::vector<KernelCall> &Calls) {
  auto C = bind(N);
  if (!C)
    return C.takeError();
  const Value *Y = N.output(0);
  if (auto G = gemmPlan(N, *C)) {
    constexpr float Inf = std::numeric_limits<float>::infinity();
    const Value *A = N.input(G->Swap ? 1 : 0), *B = N.input(G->Swap ? 0 : 1);
    if (G->NumBatch == 0) {
      // No C operand (beta 0, no strides) and no clamp.
      Calls.push_back(kabi::GemmF32{.a = A,
                                    .b = B,
                                    .c = nullptr,
                                    .y = Y,
                                    .m = G->M,
                                    .n = G->N,
                                    .k = G->K,
                                    .trans_a = G->TransA,
                                    .trans_b = G->TransB,
                                    .alpha = 1.0f,
                                    .beta = 0.0f,
                                    .c_rs = 0,
                                    .c_cs = 0,
                                    .act_lo = -Inf,
                                    .act_hi = Inf}
                          .call());
      return llvm::Error::success();
    }
    // The batched kernels share all but the transpositions.
    auto Batched = [&](auto K) {
      K.a = A;
      K.b = B;
      K.y = Y;
      K.m = G->M;
      K.n = G->N;
      K.k = G->K;
      K.batch_shape = G->Batch;
      K.a_bstride = G->AStride;
      K.b_bstride = G->BStride;
      return K.call();
    };
    if (!G->TransA && !G->TransB)
      Calls.push_back(Batched(kabi::MatmulF32{}));
    else
      Calls.push_back(Batched(
          kabi::EinsumBmmF32{.trans_a = G->TransA, .trans_b = G->TransB}));
    return llvm::Error::success();
  }
  std::vector<int64_t> Extent(CUVIL_EINSUM_MAX_LABELS, 1);
  std::copy(C->Extent.begin(), C->Extent.end(), Extent.begin());
  std::vector<int64_t> Strides(
      CUVIL_EINSUM_MAX_INPUTS * CUVIL_EINSUM_MAX_LABELS, 0);
  kabi::EinsumGroup K{.Kernel = Y->dtype() == DType::F64
                                    ? "cuvil_k_einsum_f64"
                                    : "cuvil_k_einsum_f32"};
  // The operand slots in order; those past the last operand stay null.
  kabi::PtrArg *Slots[] = {&K.x0, &K.x1, &K.x2, &K.x3};
  static_assert(std::size(Slots) == CUVIL_EINSUM_MAX_INPUTS);
  for (size_t P = 0; P < C->Strides.size(); ++P) {
    *Slots[P] = N.input(P);
    std::copy(C->Strides[P].begin(), C->Strides[P].end(),
              Strides.begin() + P * CUVIL_EINSUM_MAX_LABELS);
  }
  K.y = Y;
  K.n_inputs = C->Strides.size();
  K.n_out = C->NumOut;
  K.n_labels = C->Extent.size();
  K.extent = std::move(Extent);
  K.strides = std::move(Strides);
  Calls.push_back(K.call());
  return llvm::Error::success();
}

/// One multiply-accumulate per product term and operand beyond the first;
/// a single operand only moves or adds elements.
int64_t macsEinsum(const Node &N) {
  auto C = bind(N);
  if (!C) {
    llvm::consumeError(C.takeError());
    return 0;
  }
  auto Terms = checkedElementCount(C->Extent);
  auto M =
      checkedMul(Terms.value_or(0), static_cast<int64_t>(N.numInputs()) - 1);
  return M.value_or(INT64_MAX);
}

} // namespace

llvm::Expected<std::vector<int64_t>>
einsumShape(const std::string &Equation,
            const std::vector<std::vector<int64_t>> &Inputs) {
  auto C = bindShapes(Equation, Inputs, {});
  if (!C)
    return C.takeError();
  return C->OutShape;
}

llvm::Expected<std::vector<std::vector<int64_t>>> einsumShapes(const Node &N) {
  auto C = bind(N);
  if (!C)
    return C.takeError();
  return std::vector<std::vector<int64_t>>{C->OutShape};
}

extern const OpDef EinsumOp = {.Name = "Einsum",
                               .Verify = verifyEinsumOp,
                               .Lower = lowerEinsumOp,
                               .Macs = macsEinsum,
                               .Traits = NoTraits,
                               .Shape = einsumShapes,
                               .Attrs = EinsumAttrs::Specs};

} // namespace cuvil
