//===- Workers.cpp - Independent tasks in forked worker processes ---------===//
#include "codegen/Workers.h"

#include "ir/Diagnostic.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace cuvil {

namespace {

void appendBytes(std::string &Out, const void *P, size_t N) {
  Out.append(static_cast<const char *>(P), N);
}

bool writeAll(int Fd, const std::string &Data) {
  size_t Done = 0;
  while (Done < Data.size()) {
    ssize_t N = write(Fd, Data.data() + Done, Data.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Done += static_cast<size_t>(N);
  }
  return true;
}

llvm::Error readAll(int Fd, std::string &Out) {
  char Buf[1 << 16];
  for (;;) {
    ssize_t N = read(Fd, Buf, sizeof Buf);
    if (N == 0)
      return llvm::Error::success();
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return makeError("internal error: reading a worker process: {}",
                       std::strerror(errno));
    }
    Out.append(Buf, static_cast<size_t>(N));
  }
}

/// Takes tasks from the shared counter until none is left.
template <typename RunT>
void work(llvm::ArrayRef<uint32_t> Order, std::atomic<uint32_t> &Next,
          RunT Run) {
  for (;;) {
    const uint32_t I = Next.fetch_add(1);
    if (I >= Order.size())
      return;
    Run(Order[I]);
  }
}

struct Worker {
  pid_t Pid;
  int Fd;
};

/// Reads worker W's records (task index, size, bytes), hands them to
/// Receive, and reaps the worker.
llvm::Error collect(const Worker &W, const TaskFns &Fns) {
  std::string Data;
  llvm::Error ReadErr = readAll(W.Fd, Data);
  close(W.Fd);
  int Status = 0;
  while (waitpid(W.Pid, &Status, 0) < 0 && errno == EINTR) {
  }
  if (ReadErr)
    return ReadErr;
  if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0)
    return makeError(
        "internal error: a worker process {} {}",
        WIFSIGNALED(Status) ? "was killed by signal" : "exited with status",
        WIFSIGNALED(Status) ? WTERMSIG(Status) : WEXITSTATUS(Status));
  size_t At = 0;
  while (At < Data.size()) {
    uint32_t Index = 0;
    uint64_t Size = 0;
    if (Data.size() - At < sizeof Index + sizeof Size)
      return makeError("internal error: a truncated worker record");
    std::memcpy(&Index, Data.data() + At, sizeof Index);
    std::memcpy(&Size, Data.data() + At + sizeof Index, sizeof Size);
    At += sizeof Index + sizeof Size;
    if (Size > Data.size() - At)
      return makeError("internal error: a malformed worker record");
    if (auto E = Fns.Receive(Index, llvm::StringRef(Data.data() + At, Size)))
      return E;
    At += Size;
  }
  return llvm::Error::success();
}

/// Starts up to Count workers; each leaves by _exit after writing its
/// records. Fewer start if the system refuses a pipe or a process.
std::vector<Worker> startWorkers(unsigned Count, llvm::ArrayRef<uint32_t> Order,
                                 std::atomic<uint32_t> &Next,
                                 const TaskFns &Fns) {
  std::vector<Worker> Workers;
  std::fflush(nullptr); // workers leave by _exit, without flushing
  for (unsigned K = 0; K < Count; ++K) {
    int Fds[2];
    if (pipe(Fds) != 0)
      break;
    const pid_t Pid = fork();
    if (Pid < 0) {
      close(Fds[0]);
      close(Fds[1]);
      break;
    }
    if (Pid == 0) {
      close(Fds[0]);
      for (const Worker &W : Workers)
        close(W.Fd);
      std::string Records;
      work(Order, Next, [&](uint32_t I) {
        const std::string Result = Fns.RunInWorker(I);
        const uint64_t Size = Result.size();
        appendBytes(Records, &I, sizeof I);
        appendBytes(Records, &Size, sizeof Size);
        Records += Result;
      });
      _exit(writeAll(Fds[1], Records) ? 0 : 2);
    }
    close(Fds[1]);
    Workers.push_back({Pid, Fds[0]});
  }
  return Workers;
}

} // namespace

unsigned defaultOptimizeJobs() {
  cpu_set_t Set;
  unsigned N = 1;
  if (sched_getaffinity(0, sizeof Set, &Set) == 0)
    N = static_cast<unsigned>(CPU_COUNT(&Set));
  return std::clamp(N, 1u, 8u);
}

llvm::Error runTasks(unsigned Jobs, llvm::ArrayRef<uint32_t> Order,
                     const TaskFns &Fns) {
  // The counter is shared with the workers: a page mapped before the fork.
  void *Page = mmap(nullptr, sizeof(std::atomic<uint32_t>),
                    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  std::atomic<uint32_t> Local{0};
  std::atomic<uint32_t> &Next =
      Page == MAP_FAILED ? Local : *new (Page) std::atomic<uint32_t>(0);
  std::vector<Worker> Workers;
  if (Page != MAP_FAILED && Jobs > 1 && Order.size() > 1)
    Workers = startWorkers(
        static_cast<unsigned>(std::min<size_t>(Jobs, Order.size()) - 1), Order,
        Next, Fns);
  work(Order, Next, [&](uint32_t I) { Fns.RunHere(I); });
  llvm::Error Err = llvm::Error::success();
  for (const Worker &W : Workers)
    if (auto E = collect(W, Fns))
      Err = llvm::joinErrors(std::move(Err), std::move(E));
  if (Page != MAP_FAILED)
    munmap(Page, sizeof(std::atomic<uint32_t>));
  return Err;
}

namespace {

/// A task's process and the file its result goes to.
struct Forked {
  pid_t Pid;
  int Fd;
  uint32_t Task;
};

/// The result file of a forked task: anonymous memory, read back once the
/// process has ended (so a large result cannot block it on a full pipe).
int resultFile() { return memfd_create("cuvil-task", MFD_CLOEXEC); }

llvm::Error
finish(const Forked &F, int Status,
       llvm::function_ref<llvm::Error(uint32_t, llvm::StringRef)> Receive) {
  std::string Data;
  llvm::Error Err = llvm::Error::success();
  if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0)
    Err = makeError(
        "internal error: a compiler worker process {} {}",
        WIFSIGNALED(Status) ? "was killed by signal" : "exited with status",
        WIFSIGNALED(Status) ? WTERMSIG(Status) : WEXITSTATUS(Status));
  else if (lseek(F.Fd, 0, SEEK_SET) != 0)
    Err = makeError("internal error: reading a task's result: {}",
                    std::strerror(errno));
  else
    Err = readAll(F.Fd, Data);
  close(F.Fd);
  if (Err)
    return Err;
  return Receive(F.Task, Data);
}

} // namespace

llvm::Error runTasksForked(
    unsigned Jobs, llvm::ArrayRef<uint32_t> Order,
    llvm::function_ref<std::string(uint32_t)> Run,
    llvm::function_ref<llvm::Error(uint32_t, llvm::StringRef)> Receive) {
  std::vector<Forked> Running;
  llvm::Error Err = llvm::Error::success();
  size_t Next = 0;
  std::fflush(nullptr); // the processes leave by _exit, without flushing
  while (Next < Order.size() || !Running.empty()) {
    if (Next < Order.size() && Running.size() < std::max(Jobs, 1u) && !Err) {
      const uint32_t Task = Order[Next++];
      const int Fd = resultFile();
      if (Fd < 0) {
        Err = makeError("cannot create a compiler worker's result file: {}",
                        std::strerror(errno));
        continue;
      }
      const pid_t Pid = fork();
      if (Pid < 0) {
        close(Fd);
        Err = makeError("cannot start a compiler worker process: {}",
                        std::strerror(errno));
        continue;
      }
      if (Pid == 0) {
        const std::string Result = Run(Task);
        _exit(writeAll(Fd, Result) ? 0 : 2);
      }
      Running.push_back({Pid, Fd, Task});
      continue;
    }
    if (Running.empty())
      break; // an error stopped the starts, and all have ended
    // Whichever ends first: the next task starts in its place.
    int Status = 0;
    const pid_t Done = waitpid(-1, &Status, 0);
    if (Done < 0) {
      if (errno == EINTR)
        continue;
      for (const Forked &F : Running)
        close(F.Fd);
      Running.clear();
      Err = llvm::joinErrors(std::move(Err),
                             makeError("internal error: waiting for a code "
                                       "generation process: {}",
                                       std::strerror(errno)));
      break;
    }
    auto It = std::find_if(Running.begin(), Running.end(),
                           [&](const Forked &F) { return F.Pid == Done; });
    if (It == Running.end())
      continue; // not one of ours
    const Forked F = *It;
    Running.erase(It);
    if (auto E = finish(F, Status, Receive))
      Err = llvm::joinErrors(std::move(Err), std::move(E));
  }
  return Err;
}

} // namespace cuvil
