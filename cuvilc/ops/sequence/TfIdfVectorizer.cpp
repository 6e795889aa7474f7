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
#include "ops/OpRegistry.h"

#include <cstring>
#include <variant>

namespace cuvil {
namespace {

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
  std::string Mode = N.getString("mode", "");
  P.Mode = Mode == "TF" ? 0 : Mode == "IDF" ? 1 : Mode == "TFIDF" ? 2 : -1;
  if (P.Mode < 0)
    return nodeError(N, "mode '{}' is not supported", Mode);
  P.MinN = N.getInt("min_gram_length", 0);
  P.MaxN = N.getInt("max_gram_length", 0);
  P.MaxSkip = N.getInt("max_skip_count", 0);
  std::vector<int64_t> Counts = N.getInts("ngram_counts");
  P.Pool = N.getInts("pool_int64s");
  P.OutIndex = N.getInts("ngram_indexes");
  int64_t Levels = Counts.size();
  if (P.MinN < 1 || P.MaxN < P.MinN || P.MaxN > Levels || P.MaxSkip < 0)
    return nodeError(N, "gram lengths {}..{} do not fit the {} levels of "
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
  auto It = N.attrs().find("weights");
  if (It != N.attrs().end()) {
    const auto *W = std::get_if<std::vector<float>>(&It->second);
    if (!W || W->size() != P.OutIndex.size())
      return nodeError(N, "weights must hold one float per n-gram");
    std::vector<int64_t> Bits(NOut, 0x3f800000); // 1.0f
    std::vector<bool> Set(NOut, false);
    for (size_t G = 0; G < W->size(); ++G) {
      uint32_t B;
      std::memcpy(&B, &(*W)[G], 4);
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

llvm::Error verify(const Node &N) { return params(N).takeError(); }

llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
  auto P = params(N);
  if (!P)
    return P.takeError();
  const Value *Y = N.output(0);
  Calls.push_back(
      {fmt::format("cuvil_k_tfidf_{}", dtypeName(N.input(0)->dtype())),
       {KernelArg::tensor(N.input(0)), KernelArg::tensor(Y),
        KernelArg::i(P->Rows), KernelArg::i(P->Len), KernelArg::i(P->MinN),
        KernelArg::i(P->MaxN), KernelArg::i(P->MaxSkip), KernelArg::i(P->Mode),
        KernelArg::array(P->LevelStart), KernelArg::array(P->LevelFirst),
        KernelArg::array(P->Pool), KernelArg::array(P->OutIndex),
        KernelArg::i(Y->shape().back()),
        P->WeightBits.empty() ? KernelArg::null()
                              : KernelArg::array(P->WeightBits)}});
  return llvm::Error::success();
}

} // namespace

extern const OpDef TfIdfVectorizerOp = {"TfIdfVectorizer", verify, lower,
                                        noMacs, NoTraits};

} // namespace cuvil
