//===- TfIdfVectorizer.cpp - ONNX TfIdfVectorizer on integer tokens -------===//
//
// Counts the pool's n-grams in each row of int32/int64 tokens
// (cuvil_k_tfidf_<type>). The pool, its per-length starts and the output
// indices are attributes, passed as constant arrays; weights (per n-gram in
// ONNX) are moved to the output index each n-gram counts into. String
// tokens (pool_strings) are not supported.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"

#include <cstring>

namespace cuvil {
namespace {

// pool_strings is declared so that its kind is checked, then refused;
// weights are optional (read only when present).
#define TFIDF_ATTRS(X)                                                         \
  X(MaxGramLength, "max_gram_length", Int, 0)                                  \
  X(MaxSkipCount, "max_skip_count", Int, 0)                                    \
  X(MinGramLength, "min_gram_length", Int, 0)                                  \
  X(Mode, "mode", String, "")                                                  \
  X(NgramCounts, "ngram_counts", Ints, {})                                     \
  X(NgramIndexes, "ngram_indexes", Ints, {})                                   \
  X(PoolInt64s, "pool_int64s", Ints, {})                                       \
  X(PoolStrings, "pool_strings", Strings, {})                                  \
  X(Weights, "weights", Floats, {})
CUVIL_OP_ATTRS(TfIdfAttrs, TFIDF_ATTRS)

struct TfIdfParams {
  int64_t Rows = 1, Len = 0, MinN = 0, MaxN = 0, MaxSkip = 0, Mode = 0;
  std::vector<int64_t> LevelStart, LevelFirst, Pool, OutIndex, WeightBits;
};

llvm::Expected<TfIdfParams> params(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X || (X->dtype() != DType::I32 && X->dtype() != DType::I64))
    return nodeError(N, "only int32 and int64 tokens are supported");
  if (N.hasAttr("pool_strings"))
    return nodeError(N, "pool_strings are not supported");
  if (Y->dtype() != DType::F32)
    return nodeError(N, "the output must be float32");
  TfIdfParams P;
  if (X->rank() == 2) {
    P.Rows = X->shape()[0];
    P.Len = X->shape()[1];
  } else if (X->rank() == 1) {
    P.Len = X->shape()[0];
  } else {
    return nodeError(N, "the input must be [C] or [N, C]");
  }
  const TfIdfAttrs A(N);
  const std::string &Mode = A.Mode;
  P.Mode = Mode == "TF" ? 0 : Mode == "IDF" ? 1 : Mode == "TFIDF" ? 2 : -1;
  if (P.Mode < 0)
    return nodeError(N, "mode '{}' is not supported", Mode);
  P.MinN = A.MinGramLength;
  P.MaxN = A.MaxGramLength;
  P.MaxSkip = A.MaxSkipCount;
  const std::vector<int64_t> &Counts = A.NgramCounts;
  P.Pool = A.PoolInt64s;
  P.OutIndex = A.NgramIndexes;
  int64_t Levels = Counts.size();
  if (P.MinN < 1 || P.MaxN < P.MinN || P.MaxN > Levels || P.MaxSkip < 0)
    return nodeError(N,
                     "gram lengths {}..{} do not fit the {} levels of "
                     "ngram_counts",
                     P.MinN, P.MaxN, Levels);
  // Level n (1-based) holds pool[Counts[n-1] .. Counts[n]) as n-grams.
  int64_t First = 0;
  for (int64_t L = 0; L < Levels; ++L) {
    int64_t B = Counts[L];
    int64_t E = L + 1 < Levels ? Counts[L + 1] : P.Pool.size();
    if (B < 0 || E < B || E > static_cast<int64_t>(P.Pool.size()) ||
        (E - B) % (L + 1) != 0)
      return nodeError(N, "ngram_counts does not split the pool into n-grams");
    P.LevelStart.push_back(B);
    P.LevelFirst.push_back(First);
    First += (E - B) / (L + 1);
  }
  P.LevelStart.push_back(P.Pool.size());
  if (static_cast<int64_t>(P.OutIndex.size()) != First)
    return nodeError(N, "ngram_indexes has {} entries for {} n-grams",
                     P.OutIndex.size(), First);
  int64_t NOut = Y->shape().empty() ? 0 : Y->shape().back();
  for (int64_t O : P.OutIndex)
    if (O < 0 || O >= NOut)
      return nodeError(N, "ngram index {} is outside the output's {} columns",
                       O, NOut);
  std::vector<int64_t> Want = {NOut};
  if (X->rank() == 2)
    Want.insert(Want.begin(), P.Rows);
  if (Y->shape() != Want)
    return nodeError(N, "output '{}' must be [{}{}]", Y->name(),
                     X->rank() == 2 ? "N, " : "", "max(ngram_indexes) + 1");
  if (N.hasAttr("weights")) {
    const std::vector<float> &W = A.Weights;
    if (W.size() != P.OutIndex.size())
      return nodeError(N, "weights must hold one float per n-gram");
    std::vector<int64_t> Bits(NOut, 0x3f800000); // 1.0f
    std::vector<bool> Set(NOut, false);
    for (size_t G = 0; G < W.size(); ++G) {
      uint32_t B;
      std::memcpy(&B, &W[G], 4);
      int64_t O = P.OutIndex[G];
      if (Set[O] && Bits[O] != B)
        return nodeError(N, "n-grams counted into one output with different "
                            "weights are not supported");
      Bits[O] = B;
      Set[O] = true;
    }
    P.WeightBits = std::move(Bits);
  }
  return P;
}

llvm::Error verifyTfIdfVectorizerOp(const Node &N) {
  return params(N).takeError();
}

llvm::Error lowerTfIdfVectorizerOp(const Node &N,
                                   std::vector<KernelCall> &Calls) {
  auto P = params(N);
  if (!P)
    return P.takeError();
  const Value *Y = N.output(0);
  Calls.push_back(kabi::TfidfGroup{
      .Kernel = fmt::format("cuvil_k_tfidf_{}", dtypeName(N.input(0)->dtype())),
      .x = N.input(0),
      .y = Y,
      .rows = P->Rows,
      .len = P->Len,
      .min_n = P->MinN,
      .max_n = P->MaxN,
      .max_skip = P->MaxSkip,
      .mode = P->Mode,
      .level_start = P->LevelStart,
      .level_first = P->LevelFirst,
      .pool = P->Pool,
      .out_index = P->OutIndex,
      .n_out = Y->shape().back(),
      .weight_bits =
          P->WeightBits.empty() ? kabi::PtrArg() : kabi::PtrArg(P->WeightBits)}
                      .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef TfIdfVectorizerOp = {.Name = "TfIdfVectorizer",
                                        .Verify = verifyTfIdfVectorizerOp,
                                        .Lower = lowerTfIdfVectorizerOp,
                                        .Macs = noMacs,
                                        .Traits = NoTraits,
                                        .Attrs = TfIdfAttrs::Specs};

} // namespace cuvil
