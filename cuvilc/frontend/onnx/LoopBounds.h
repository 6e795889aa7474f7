//===- LoopBounds.h - Loops the user bounds (--loop-bound) ------*- C++ -*-===//
//
// `--loop-bound NODE=K` names a Loop of the main graph that has no bound of
// its own; the unroller (UnrollLoop.cpp) unrolls it to K guarded
// iterations and says what run must check (LoopBoundCheck). The importer
// checks the names before unrolling and puts the checks into the graph
// after importing the nodes.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_ONNX_LOOPBOUNDS_H
#define CUVIL_FRONTEND_ONNX_LOOPBOUNDS_H

#include "frontend/onnx/Unroll.h"
#include "ir/Graph.h"

#include <llvm/Support/Error.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace cuvil {

/// Every name of Bounds is a Loop of G (the main graph); otherwise an error
/// naming it and listing the graph's Loops.
llvm::Error checkLoopBoundNames(const onnx::GraphProto &G,
                                const std::map<std::string, int64_t> &Bounds);

/// A cuvil.LoopBound node (ops/sequence/LoopBound.h) on each output of each
/// Loop of Checks, placed after the producers of its inputs. Its output
/// takes the Loop output's name and uses, and Values (the importer's values
/// by ONNX name) the new value: run before the graph's outputs are taken.
void addLoopBoundChecks(Graph &G,
                        std::unordered_map<std::string, Value *> &Values,
                        const std::vector<LoopBoundCheck> &Checks);

} // namespace cuvil

#endif
