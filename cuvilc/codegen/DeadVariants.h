//===- DeadVariants.h - Skip optimising kernel variants never run -*- C++
//-*-===//
//
// A kernel entry point chooses among specialised variants at run time (the
// INT8 depthwise kernel: 3x3 or 5x5 windows, stride 1 or 2, the lanes or
// the planes form). A layer's step calls it with its shape as constants,
// so the optimiser ends up keeping the one variant the layer runs. But the
// variants are noinline functions, and LLVM's inliner walks the call
// graph bottom-up: every variant is optimised in full before the step that
// calls it learns which one it needs. On a78 DS-CNN INT8 that was 1.9 s of
// its 2.5 s build, for code that was then deleted.
//
// skipDeadVariants answers the question early, on a copy of the module: it
// inlines what is always inlined, lets the steps' constants decide their
// branches (SROA, EarlyCSE, InstCombine, SimplifyCFG) and deletes what is
// no longer called. A noinline function of the module that did not survive
// that is marked optnone in the real module: O3 (with the instrumentation
// that honours optnone) then spends nothing on it and deletes it as before,
// once the step's own branches are folded. The code O3 keeps is the same
// with or without this: every benchmark model's object came out
// byte-identical on every target.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_DEADVARIANTS_H
#define CUVIL_CODEGEN_DEADVARIANTS_H

#include <llvm/IR/Module.h>
#include <string>
#include <vector>

namespace cuvil {

/// Marks optnone the internal noinline functions of M that a copy of M,
/// cheaply simplified, no longer calls; returns their names. Should O3 keep
/// one of them after all, optimizeModule takes the mark off and runs the
/// pipeline again: the marks cost time when wrong, never speed.
std::vector<std::string> skipDeadVariants(llvm::Module &M);

} // namespace cuvil

#endif
