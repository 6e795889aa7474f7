//===- fuzz_target_toml.cpp - libFuzzer: target TOML files ----------------===//
//
// Each input is the text of a targets/NAME.toml file. The loader must turn
// it into a TargetInfo or an error; a target it accepts must hold what the
// rest of the compiler relies on (its arena and weights regions exist, the
// arena regions are writable, the DMA alignment is a power of two), and a
// small graph must plan in its memory and get a linker-script fragment, or
// an error.
//
//===----------------------------------------------------------------------===//
#include "driver/Driver.h"
#include "emit/LinkerScript.h"
#include "ops/OpRegistry.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <cstdio>
#include <cstdlib>
#include <llvm/Support/Error.h>

using namespace cuvil;

namespace {

[[noreturn]] void fail(const char *What) {
  std::fprintf(stderr, "fuzz_target_toml: %s\n", What);
  std::abort();
}

/// x[1,16,8,8] -> Relu -> a -> Sigmoid -> b; Concat(a, b) -> y[1,32,8,8]:
/// an in-place candidate, a Concat computed into its slices, and two live
/// buffers at a time.
std::unique_ptr<Graph> smallGraph() {
  auto G = std::make_unique<Graph>("fuzz");
  Value *X = G->addValue("x", DType::F32, {1, 16, 8, 8}, ValueKind::Input);
  Value *A =
      G->addValue("a", DType::F32, {1, 16, 8, 8}, ValueKind::Intermediate);
  Value *B =
      G->addValue("b", DType::F32, {1, 16, 8, 8}, ValueKind::Intermediate);
  Value *Y =
      G->addValue("y", DType::F32, {1, 32, 8, 8}, ValueKind::Intermediate);
  G->inputs().push_back(X);
  G->outputs().push_back(Y);
  int Index = 0;
  auto Add = [&](const char *Op, std::vector<Value *> Ins, Value *Out) {
    Node *N = G->addNode(Op, Out->name(), lookupOp(Op), std::move(Ins), {Out});
    N->setOpset(13);
    N->origin().Names.push_back(Out->name());
    N->origin().Indices.push_back(Index++);
    return N;
  };
  Add("Relu", {X}, A);
  Add("Sigmoid", {A}, B);
  Add("Concat", {A, B}, Y)->setAttr("axis", int64_t(1));
  return G;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  auto T =
      parseTarget(std::string_view(reinterpret_cast<const char *>(Data), Size),
                  "fuzz.toml");
  if (!T) {
    llvm::consumeError(T.takeError());
    return 0;
  }
  if (T->DmaAlign <= 0 || (T->DmaAlign & (T->DmaAlign - 1)))
    fail("accepted a DMA alignment that is not a power of two");
  if (!T->region(T->WeightsRegion))
    fail("accepted a weights region that does not exist");
  for (const std::string &R : T->ArenaRegions)
    if (!T->region(R) || !T->region(R)->writable())
      fail("accepted an arena region that does not exist or is read-only");

  auto PO = planOptionsFor(*T, {});
  if (!PO)
    fail("planOptionsFor rejects a target the loader accepted");
  auto G = smallGraph();
  auto Plan = planMemory(*G, *PO);
  if (!Plan) {
    llvm::consumeError(Plan.takeError());
    return 0;
  }
  if (writeLinkerScript("fuzz", *Plan, *T, T->WeightsRegion, true).empty())
    fail("empty linker script");
  return 0;
}
