//===- StackUsage.h - Worst-case stack depth of the entry points -*- C++
//-*-===//
//
// The stack an entry point (init, run) may need, from the code LLVM emits:
// the frame size of every function as the prologue/epilogue inserter fixed
// it (collected during the one object emission, see FrameSizeCollector),
// and the call graph of the final module. A bound is only stated when it is
// sound: an indirect call, recursion or a dynamically sized stack
// allocation anywhere below the entry point makes it unknown, with the
// reason.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_STACKUSAGE_H
#define CUVIL_CODEGEN_STACKUSAGE_H

#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cuvil {

/// Frame bytes per function name, as emitted.
using FrameSizes = std::map<std::string, uint64_t>;

/// Collects the "StackSize" analysis remark the prologue/epilogue inserter
/// emits for every machine function (the figure LLVM's .stack_sizes section
/// would hold), without changing the generated code. Every other diagnostic
/// goes on to the default handling.
class FrameSizeCollector : public llvm::DiagnosticHandler {
public:
  explicit FrameSizeCollector(FrameSizes &Out) : Out(Out) {}
  bool handleDiagnostics(const llvm::DiagnosticInfo &DI) override;
  bool isAnalysisRemarkEnabled(llvm::StringRef PassName) const override;
  bool isAnyRemarkEnabled() const override { return true; }

private:
  FrameSizes &Out;
};

/// The worst-case stack depth of one entry point.
struct StackBound {
  bool Known = false;
  uint64_t Bytes = 0;            ///< When Known.
  std::string Reason;            ///< When not Known: why.
  std::vector<std::string> Path; ///< The deepest call chain, entry first.
};

/// Deepest call chain from Entry in M, each function costing its frame
/// (Frames) plus ReturnAddressBytes (what a call pushes: 8 on x86-64, 0
/// where the return address lives in a register). Helpers are functions the
/// backend may call without an IR call (memcpy for an llvm.memcpy it does
/// not inline): every function is assumed to call each of them. A function
/// that calls nothing may also use RedZoneBytes below its stack pointer
/// without counting them in its frame (x86-64's 128-byte red zone).
/// Outside holds the bounds of functions M declares but another object
/// defines (the support code, SupportObject.h), each with its callees and
/// its return address: a call to one costs its bound, a helper among them
/// is called as if defined here.
using OutsideBounds = std::map<std::string, StackBound>;
StackBound stackBound(const llvm::Module &M, const std::string &Entry,
                      const FrameSizes &Frames, unsigned ReturnAddressBytes,
                      const std::vector<std::string> &Helpers,
                      unsigned RedZoneBytes = 0,
                      const OutsideBounds &Outside = {});

/// stackBound with the call conventions of the target Triple: on x86 a
/// call pushes an 8-byte return address and leaf functions may use the
/// 128-byte red zone below the stack pointer; elsewhere (AArch64, RISC-V)
/// the return address is in a register the callee's frame saves if it must.
StackBound entryStackBound(const llvm::Module &M, const std::string &Triple,
                           const std::string &Entry, const FrameSizes &Frames,
                           const std::vector<std::string> &Helpers,
                           const OutsideBounds &Outside = {});

} // namespace cuvil

#endif
