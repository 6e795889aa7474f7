//===- Bottlenecks.cpp - A profile matched to a build, and read -----------===//
#include "emit/Bottlenecks.h"

#include "codegen/ProfileCode.h"

#include "ir/Diagnostic.h"
#include "ir/Escape.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>

namespace cuvil {

namespace {

/// Reference kernels next to which the runtime has a faster variant that
/// lowering picks when the weights were packed at compile time.
const std::map<std::string, std::string> &fasterVariants() {
  static const std::map<std::string, std::string> M = {
      {"cuvil_k_conv2d_f32", "cuvil_k_conv2d_packed_f32"},
      {"cuvil_k_gemm_f32", "cuvil_k_gemm_packed_f32"},
      {"cuvil_k_qconv2d_s8", "cuvil_k_qconv2d_packed_s8"},
      {"cuvil_k_qgemm_s8", "cuvil_k_qgemm_packed_s8"},
      {"cuvil_k_qdwconv2d_s8", "cuvil_k_qdwconv2d_tiled_s8"},
  };
  return M;
}

/// Kernels that only move bytes: what a layout change costs.
bool isLayoutKernel(const std::string &K) {
  for (const char *Part : {"transpose", "copy", "slice", "pad_b", "gather"})
    if (K.find(Part) != std::string::npos)
      return true;
  return false;
}

std::string percent(double Fraction) {
  return fmt::format("{:.1f}%", 100 * Fraction);
}

/// The likely reasons a row takes more than its MACs' worth of time.
std::vector<std::string> reasonsFor(const ProfileRow &R) {
  std::vector<std::string> Out;
  const LayerFacts *L = R.Layer;
  if (!L) {
    Out.push_back("copies of the outputs into the caller's buffers: no "
                  "arithmetic, only bytes moved");
    return Out;
  }
  std::vector<std::string> Layout;
  for (const std::string &K : L->Kernels) {
    if (isLayoutKernel(K))
      Layout.push_back(K);
    auto F = fasterVariants().find(K);
    if (F != fasterVariants().end() && L->Macs > 0)
      Out.push_back(fmt::format(
          "scalar/reference path: {} is the reference kernel; the faster "
          "{} needs weights packed at compile time (not done with "
          "--kernels portable, or for this shape)",
          K, F->second));
  }
  if (!Layout.empty())
    Out.push_back(fmt::format("layout copies: {} only move bytes",
                              fmt::join(Layout, ", ")));
  if (L->Macs == 0 && Layout.empty())
    Out.push_back(fmt::format("no multiply-accumulates: {} work ({}) whose "
                              "time the MAC count does not predict",
                              L->Kernels.empty() ? "data-movement"
                                                 : "elementwise or reduction",
                              L->Op));
  if (L->Macs > 0) {
    double BytesPerMac = static_cast<double>(L->BytesMoved) / L->Macs;
    if (BytesPerMac >= MemoryBoundBytesPerMac)
      Out.push_back(fmt::format(
          "memory-bound: {:.2f} bytes moved per MAC (at least {}): loads and "
          "stores, not arithmetic, set its pace",
          BytesPerMac, MemoryBoundBytesPerMac));
    if (L->OutputSpatial > 0 && L->OutputSpatial <= SmallSpatial)
      Out.push_back(fmt::format(
          "small spatial size: {} output positions per channel (at most {}), "
          "too few for the kernel's loops to amortise their setup",
          L->OutputSpatial, SmallSpatial));
  }
  if (Out.empty())
    Out.push_back(R.PeakFraction
                      ? fmt::format("none of the rules applies; it runs at "
                                    "{} of the target's peak",
                                    percent(*R.PeakFraction))
                      : "none of the rules applies");
  return Out;
}

/// Every node with kernel calls must be profiled, each once, and every
/// profiled node must be one with code: otherwise the profile is of
/// another build.
llvm::Error matchSteps(const LayerProfile &P,
                       const std::vector<LayerFacts> &Layers,
                       std::vector<ProfileRow> &Rows) {
  std::map<std::string, const LayerFacts *> ByName;
  for (const LayerFacts &L : Layers)
    ByName.emplace(L.Name, &L);
  std::set<const LayerFacts *> Seen;
  for (const LayerProfileStep &S : P.Steps) {
    ProfileRow R;
    R.Step = &S;
    if (S.Node != OutputCopiesStep) {
      auto It = ByName.find(S.Node);
      if (It == ByName.end())
        return makeError("step {} is node '{}', which this build does not "
                         "have: the profile is of another model or of a "
                         "build with other options",
                         S.Step, printable(S.Node));
      if (!It->second->HasCode)
        return makeError("step {} is node '{}', a view without code in this "
                         "build: the profile is of a build with other "
                         "options",
                         S.Step, printable(S.Node));
      if (!Seen.insert(It->second).second)
        return makeError("node '{}' is profiled twice", printable(S.Node));
      R.Layer = It->second;
    }
    Rows.push_back(R);
  }
  // A step whose only calls are copies may have lost them to the planner,
  // and a profiler that times kernel calls then has nothing of it.
  for (const LayerFacts &L : Layers)
    if (!L.Kernels.empty() && !L.OnlyCopies && !Seen.count(&L))
      return makeError("node '{}' (step {}) of this build has code but no "
                       "profiled step: the profile is of another model or "
                       "of a build with other options",
                       printable(L.Name), L.Step);
  return llvm::Error::success();
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t M = V.size() / 2;
  return V.size() % 2 ? V[M] : (V[M - 1] + V[M]) / 2;
}

} // namespace

llvm::Expected<ProfileAnalysis>
analyzeProfile(const LayerProfile &P, const std::vector<LayerFacts> &Layers,
               const TargetInfo &T) {
  if (!P.Target.empty() && P.Target != T.Name)
    return makeError("the profile was measured on target '{}', the report "
                     "is for target '{}'",
                     printable(P.Target), T.Name);
  ProfileAnalysis A;
  A.Counter = P.Counters.front();
  A.Cycles = A.Counter == "cycles";
  if (auto E = matchSteps(P, Layers, A.Rows))
    return E;
  for (ProfileRow &R : A.Rows) {
    auto It = R.Step->Counts.find(A.Counter);
    if (It == R.Step->Counts.end())
      return makeError("step {} (node '{}') has no \"{}\" count", R.Step->Step,
                       printable(R.Step->Node), A.Counter);
    // The table sums every run: per run, rates are MACs of one inference.
    R.Count = It->second / static_cast<double>(P.Runs);
    A.StepSum += R.Count;
  }
  auto Measured = P.Total.find(A.Counter);
  double Total = Measured == P.Total.end()
                     ? 0
                     : Measured->second / static_cast<double>(P.Runs);
  A.TotalMeasured = Measured != P.Total.end() && Total >= A.StepSum;
  A.Total = A.TotalMeasured ? Total : A.StepSum;

  std::vector<double> Rates;
  for (ProfileRow &R : A.Rows) {
    R.Share = A.Total > 0 ? R.Count / A.Total : 0;
    A.MaxShare = std::max(A.MaxShare, R.Share);
    if (!R.Layer || R.Layer->Macs <= 0 || R.Count <= 0)
      continue;
    R.Rate = R.Layer->Macs / R.Count;
    Rates.push_back(*R.Rate);
    double Peak = R.Layer->Int8 ? T.PeakMacsInt8 : T.PeakMacsF32;
    if (A.Cycles && Peak > 0)
      R.PeakFraction = *R.Rate / Peak;
  }
  if (!Rates.empty())
    A.MedianRate = median(Rates);

  // What each row would cost at the median rate; the rows that take the
  // most beyond it are the bottlenecks.
  for (size_t I = 0; I < A.Rows.size(); ++I) {
    const ProfileRow &R = A.Rows[I];
    int64_t Macs = R.Layer ? R.Layer->Macs : 0;
    double Expected = A.MedianRate && Macs > 0 ? Macs / *A.MedianRate : 0;
    Bottleneck B;
    B.Row = I;
    B.Excess = R.Count - Expected;
    B.ExcessShare = A.Total > 0 ? B.Excess / A.Total : 0;
    bool Slow =
        !R.Rate || !A.MedianRate || *R.Rate < SlowRateFraction * *A.MedianRate;
    if (Slow && B.ExcessShare >= MinExcessShare)
      A.Bottlenecks.push_back(B);
  }
  std::stable_sort(A.Bottlenecks.begin(), A.Bottlenecks.end(),
                   [](const Bottleneck &L, const Bottleneck &R) {
                     return L.Excess > R.Excess;
                   });
  if (A.Bottlenecks.size() > MaxBottlenecks)
    A.Bottlenecks.resize(MaxBottlenecks);
  for (Bottleneck &B : A.Bottlenecks)
    B.Reasons = reasonsFor(A.Rows[B.Row]);
  return A;
}

} // namespace cuvil
