//===- OnnxWalk.h - Every node of an ONNX graph and its subgraphs -*- C++
//-*-===//
#ifndef CUVIL_FRONTEND_ONNX_ONNXWALK_H
#define CUVIL_FRONTEND_ONNX_ONNXWALK_H

#include <onnx/onnx_pb.h>

#include <vector>

namespace cuvil {

/// Calls F(node, index in its graph) for every node of G and of its
/// subgraphs (If branches, Loop and Scan bodies), walked with an explicit
/// stack: no recursion on the nesting depth.
template <typename Fn> void forEachOnnxNode(const onnx::GraphProto &G, Fn F) {
  std::vector<const onnx::GraphProto *> Todo{&G};
  while (!Todo.empty()) {
    const onnx::GraphProto *Cur = Todo.back();
    Todo.pop_back();
    int Index = 0;
    for (const auto &NP : Cur->node()) {
      F(NP, Index++);
      for (const auto &A : NP.attribute()) {
        if (A.has_g())
          Todo.push_back(&A.g());
        for (const auto &Sub : A.graphs())
          Todo.push_back(&Sub);
      }
    }
  }
}

} // namespace cuvil

#endif
