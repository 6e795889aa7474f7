//===- fuzz_onnx.cpp - libFuzzer: ONNX bytes through the compiler ---------===//
//
// Each input is the contents of a .onnx file. It goes through the stages of
// `cuvilc build`, in memory: import (protobuf parse, ONNX checker, shape
// inference), the pass pipeline, the memory planner for the u74-mc target
// (two regions, spilling), the weight blob, the header, the linker-script
// fragment and the JSON report. The blob the compiler writes must pass the
// runtime's own check (runtime-baremetal/lib/blob.c). With
// CUVIL_FUZZ_CODEGEN=1 in the environment, the object is generated too
// (about a second an input, so off by default).
//
// Most inputs end in an error, which is the right outcome; only crashes,
// sanitizer reports, leaks, timeouts and a failed cross-check count.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelLibrary.h"
#include "codegen/ModelCodegen.h"
#include "driver/Driver.h"
#include "emit/HeaderWriter.h"
#include "emit/LinkerScript.h"
#include "emit/Report.h"
#include "emit/WeightsBlob.h"
#include "ops/LowerGraph.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include "cuvil/blob.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <llvm/Support/Error.h>
#include <ostream>

using namespace cuvil;

namespace {

struct Setup {
  TargetInfo Target;
  PlanOptions Plan;
  PipelineOptions Passes;
  bool Codegen = false;
};
Setup *S;

[[noreturn]] void fail(const char *What) {
  std::fprintf(stderr, "fuzz_onnx: %s\n", What);
  std::abort();
}

/// The blob as the runtime sees it: in its own buffer, aligned like the
/// section or file it comes from, and no larger than its size (so a read
/// past the end is an ASan report).
void checkBlobWithRuntime(const std::vector<uint8_t> &Blob,
                          const MemoryPlan &Plan, uint64_t Hash) {
  void *Copy = nullptr;
  if (posix_memalign(&Copy, static_cast<size_t>(Plan.Alignment),
                     Blob.size() ? Blob.size() : 1))
    fail("out of memory");
  std::memcpy(Copy, Blob.data(), Blob.size());
  const uint8_t *Data = nullptr;
  int Status = cuvil_blob_open(
      Copy, Blob.size(), Hash, static_cast<uint64_t>(Plan.Alignment),
      static_cast<uint64_t>(Plan.WeightsSize), CUVIL_BLOB_VERIFY_SHA256, &Data);
  std::free(Copy);
  if (Status != CUVIL_OK)
    fail("the runtime rejects the weight blob the compiler wrote");
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  S = new Setup;
  auto T = loadTarget("u74-mc");
  if (!T)
    fail(llvm::toString(T.takeError()).c_str());
  S->Target = std::move(*T);
  auto PO = planOptionsFor(S->Target, {});
  if (!PO)
    fail(llvm::toString(PO.takeError()).c_str());
  S->Plan = std::move(*PO);
  S->Passes.PackPanel =
      kernelConstant(S->Target.Kernels, "cuvil_k_pack_mr").value_or(0);
  const char *CG = std::getenv("CUVIL_FUZZ_CODEGEN");
  S->Codegen = CG && std::strcmp(CG, "1") == 0;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::ostream NoLog(nullptr);
  auto G = loadModelBytes(
      std::string_view(reinterpret_cast<const char *>(Data), Size), {}, {},
      NoLog, S->Passes);
  if (!G) {
    llvm::consumeError(G.takeError());
    return 0;
  }
  auto Plan = planMemory(**G, S->Plan);
  if (!Plan) {
    llvm::consumeError(Plan.takeError());
    return 0;
  }
  const uint64_t Hash = 0x5eed;
  std::vector<uint8_t> Blob =
      buildWeightsBlob(*Plan, "fuzz", S->Target.Name, Hash);
  checkBlobWithRuntime(Blob, *Plan, Hash);

  HeaderInfo HI;
  HI.ModelName = "fuzz";
  HI.SourceFile = "fuzz.onnx";
  HI.BlobSize = Blob.size();
  HI.StructureHash = Hash;
  std::string Header = writeHeader(**G, *Plan, S->Target, HI);
  std::string Script = writeLinkerScript("fuzz", *Plan, S->Target,
                                         S->Target.WeightsRegion, true);
  std::string Report = writeReport(**G, *Plan, S->Target, HI,
                                   S->Target.WeightsRegion, Blob.size());
  if (Header.empty() || Script.empty() || Report.empty())
    fail("an emitter wrote nothing");

  if (S->Codegen) {
    CodegenOptions CO;
    CO.ModelName = "fuzz";
    CO.StructureHash = Hash;
    CO.WeightsDataSize = Plan->WeightsSize;
    CO.EmbeddedBlob = Blob;
    auto Lowered = lowerGraph(**G);
    if (!Lowered) {
      llvm::consumeError(Lowered.takeError());
      return 0;
    }
    auto Code = generateObject(**G, *Lowered, *Plan, S->Target, CO);
    if (!Code)
      llvm::consumeError(Code.takeError());
  }
  return 0;
}
