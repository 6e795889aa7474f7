//===- Workers.h - Independent tasks in forked worker processes -*- C++ -*-===//
//
// The build's two heavy LLVM stages, the optimiser over the layers' steps
// (SplitOptimize) and code generation over parts of the module
// (SplitCodegen), are made of independent tasks. runTasks spreads them over
// this process and forked workers: every process takes the next task from
// a counter they share, in the order given (costliest first), and a
// worker sends each result back as bytes before it leaves. LLVM keeps
// global state (its command-line options, the target registry), which is
// why the workers are processes rather than threads. A task's result
// depends on the task alone, never on which process ran it.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_WORKERS_H
#define CUVIL_CODEGEN_WORKERS_H

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>

namespace cuvil {

/// The processes a build uses when it does not say (--jobs 0): the cores
/// this process may run on, at most 8.
unsigned defaultOptimizeJobs();

/// How runTasks runs one task.
struct TaskFns {
  /// In this process: the result stays here (Run keeps it).
  llvm::function_ref<void(uint32_t)> RunHere;
  /// In a worker: the result as bytes.
  llvm::function_ref<std::string(uint32_t)> RunInWorker;
  /// In this process, for each result a worker sent.
  llvm::function_ref<llvm::Error(uint32_t, llvm::StringRef)> Receive;
};

/// Runs every task of Order in Jobs processes, this one included (fewer
/// when the system refuses a process or a pipe; all here when Jobs is 1).
/// Fails when a worker fails or dies, after all have ended.
llvm::Error runTasks(unsigned Jobs, llvm::ArrayRef<uint32_t> Order,
                     const TaskFns &Fns);

/// Runs each task of Order in a process forked for it alone, at most Jobs
/// at a time, while this one waits: for tasks that take this process's
/// state apart (code generation keeps one part of the module and deletes
/// the rest, which leaves every other value as it was, use lists
/// included). Receive gets each result in this process. Fails, after the
/// running ones have ended, when a process or its result file cannot be
/// had or a task's process fails.
llvm::Error runTasksForked(
    unsigned Jobs, llvm::ArrayRef<uint32_t> Order,
    llvm::function_ref<std::string(uint32_t)> Run,
    llvm::function_ref<llvm::Error(uint32_t, llvm::StringRef)> Receive);

} // namespace cuvil

#endif
