//===- StageTimer.cpp -----------------------------------------------------===//
#include "ir/StageTimer.h"

#include <algorithm>
#include <fmt/format.h>

namespace cuvil {

StageTimer::StageTimer(Options O) : Opts(O), Start(Clock::now()) {
  if (!Opts.Progress)
    return;
  Ticker = std::thread([this] {
    std::unique_lock<std::mutex> L(Lock);
    while (!Stop.wait_for(L, std::chrono::milliseconds(250),
                          [this] { return Stopping; }))
      if (Running)
        showProgress();
  });
}

StageTimer::~StageTimer() {
  {
    std::lock_guard<std::mutex> L(Lock);
    Stopping = true;
    clearProgress();
  }
  Stop.notify_all();
  if (Ticker.joinable())
    Ticker.join();
}

void StageTimer::begin(std::string_view Name) {
  std::lock_guard<std::mutex> L(Lock);
  endCurrent();
  Current = std::string(Name);
  StageStart = Clock::now();
  Running = true;
  showProgress();
}

void StageTimer::finish() {
  std::lock_guard<std::mutex> L(Lock);
  endCurrent();
  clearProgress();
}

void StageTimer::endCurrent() {
  if (!Running)
    return;
  Running = false;
  std::chrono::duration<double> S = Clock::now() - StageStart;
  Done.push_back({Current, S.count()});
  if (Opts.Verbose) {
    clearProgress();
    *Opts.Verbose << fmt::format("cuvilc: {:<22} {:9.1f} ms\n", Current,
                                 1000 * S.count())
                  << std::flush;
  }
}

void StageTimer::showProgress() {
  if (!Opts.Progress)
    return;
  std::chrono::duration<double> Since = Clock::now() - Start;
  if (Since.count() < Opts.ProgressAfter)
    return;
  size_t Percent =
      Expected ? std::min<size_t>(99, 100 * Done.size() / Expected) : 0;
  // \r and "erase to the end of the line": the line is rewritten in place.
  *Opts.Progress << fmt::format("\rcuvilc: [{:3}%] {}\x1b[K", Percent, Current)
                 << std::flush;
  ProgressShown = true;
}

void StageTimer::clearProgress() {
  if (!ProgressShown)
    return;
  *Opts.Progress << "\r\x1b[K" << std::flush;
  ProgressShown = false;
}

std::string StageTimer::table() const {
  double Total = 0;
  for (const Stage &S : Done)
    Total += S.Seconds;
  std::vector<const Stage *> Order;
  for (const Stage &S : Done)
    Order.push_back(&S);
  std::stable_sort(
      Order.begin(), Order.end(),
      [](const Stage *A, const Stage *B) { return A->Seconds > B->Seconds; });
  std::string T = "cuvilc: time per stage (wall clock)\n";
  T += fmt::format("  {:<22} {:>9} {:>7}\n", "stage", "ms", "share");
  for (const Stage *S : Order)
    T += fmt::format("  {:<22} {:9.1f} {:6.1f}%\n", S->Name, 1000 * S->Seconds,
                     Total > 0 ? 100 * S->Seconds / Total : 0.0);
  T += fmt::format("  {:<22} {:9.1f} {:6.1f}%\n", "total", 1000 * Total, 100.0);
  return T;
}

} // namespace cuvil
