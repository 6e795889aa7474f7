//===- StageTimer.h - Where a compile's time goes ---------------*- C++ -*-===//
//
// `cuvilc build -v` prints every stage of the compile with its wall time as
// it ends (import, each graph pass, memory planning, the weight blob,
// lowering, the LLVM stages, emitting the files), `--time-passes` prints the
// table of all of them at the end, and a long build on a terminal shows a
// progress line. The stages run one after the other: a stage ends when the
// next one begins, or at finish(). Each compiler stage names its own parts
// (passes/Pipeline.cpp, codegen/ModelCodegen.cpp, driver/Compile.cpp), so
// the timer is passed down as an optional pointer: nothing is timed or
// printed without one.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_IR_STAGETIMER_H
#define CUVIL_IR_STAGETIMER_H

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cuvil {

class StageTimer {
public:
  struct Options {
    /// Each stage with its time as it ends (-v); null: silent.
    std::ostream *Verbose = nullptr;
    /// A progress line ("stage, percent"), rewritten in place, once the
    /// compile has run for ProgressAfter seconds; null: none. For a
    /// terminal only: the caller decides (isatty).
    std::ostream *Progress = nullptr;
    double ProgressAfter = 2.0;
  };

  /// With Options::Progress, a thread redraws the line a few times a
  /// second, so that it moves during a long stage (LLVM's optimisation).
  explicit StageTimer(Options O);
  StageTimer() : StageTimer(Options()) {}
  ~StageTimer();
  StageTimer(const StageTimer &) = delete;
  StageTimer &operator=(const StageTimer &) = delete;

  /// The number of stages the command will run, for the progress percent.
  void expect(size_t Stages) { Expected = Stages; }
  /// Ends the current stage (if any) and begins Name.
  void begin(std::string_view Name);
  /// Ends the current stage; clears the progress line.
  void finish();

  struct Stage {
    std::string Name;
    double Seconds = 0;
  };
  const std::vector<Stage> &stages() const { return Done; }
  /// The --time-passes table: every stage, its seconds and share, and the
  /// total, slowest first.
  std::string table() const;

private:
  using Clock = std::chrono::steady_clock;
  // Callers hold Lock.
  void endCurrent();
  void showProgress();
  void clearProgress();

  Options Opts;
  std::mutex Lock; ///< Guards the state below and the progress stream.
  std::condition_variable Stop;
  bool Stopping = false;
  std::thread Ticker;
  Clock::time_point Start, StageStart;
  std::string Current;
  bool Running = false, ProgressShown = false;
  size_t Expected = 0;
  std::vector<Stage> Done;
};

/// Begins stage Name on T, if there is a timer.
inline void beginStage(StageTimer *T, std::string_view Name) {
  if (T)
    T->begin(Name);
}

} // namespace cuvil

#endif
