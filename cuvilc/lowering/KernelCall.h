//===- KernelCall.h - Kernel calls: what lowering hands codegen -*- C++ -*-===//
//
// Lowering (ops/) turns each node into calls of runtime kernels (the
// cuvil_k_* functions of runtime-baremetal/include/cuvil/kernels.h);
// codegen/ turns the calls into LLVM IR. The calls are plain data, so
// neither side depends on the other: ops/ does not know LLVM IR and
// codegen/ does not know the op registry.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_LOWERING_KERNELCALL_H
#define CUVIL_LOWERING_KERNELCALL_H

#include "ir/Graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace cuvil {

/// In a build for a range of one dimension (`--dim seq=LO..HI`): an integer
/// of the lowering as a function of that dimension's value d at run time,
/// with k = d - LO. Without a table it is V0 + D1*k + D2*k*(k-1)/2, which
/// is exact for every polynomial of degree two or less that is an integer
/// at the integers (sizes, strides and offsets of a sequence model); other
/// integers keep one value per length in Table (see driver/DimRange.h).
struct DimFormula {
  int64_t V0 = 0, D1 = 0, D2 = 0;
  std::vector<int64_t> Table;

  int64_t at(int64_t K) const {
    return Table.empty() ? V0 + D1 * K + D2 * (K * (K - 1) / 2)
                         : Table[static_cast<size_t>(K)];
  }
  bool operator<(const DimFormula &O) const {
    return std::tie(V0, D1, D2, Table) < std::tie(O.V0, O.D1, O.D2, O.Table);
  }
};

/// One argument of a kernel call.
struct KernelArg {
  enum class Kind : uint8_t {
    Tensor,   ///< Pointer to a tensor's buffer (+ ByteOffset).
    Null,     ///< A null pointer (an absent optional operand).
    Int,      ///< int64_t scalar.
    Float,    ///< float scalar.
    IntArray, ///< Pointer to a constant int64_t array.
  };
  Kind K = Kind::Null;
  const Value *V = nullptr;
  int64_t ByteOffset = 0;
  int64_t I = 0;
  float F = 0;
  std::vector<int64_t> Array;
  /// In a build for a range of a dimension, what varies with it: for Int,
  /// one formula of I; for Tensor, one of ByteOffset; for IntArray, one per
  /// element. Empty: the argument is the same at every value of the range
  /// (and always in a build for fixed dimensions).
  std::vector<DimFormula> Dyn;

  static KernelArg tensor(const Value *V, int64_t ByteOffset = 0) {
    KernelArg A;
    A.K = Kind::Tensor;
    A.V = V;
    A.ByteOffset = ByteOffset;
    return A;
  }
  static KernelArg null() { return KernelArg(); }
  static KernelArg i(int64_t X) {
    KernelArg A;
    A.K = Kind::Int;
    A.I = X;
    return A;
  }
  static KernelArg f(float X) {
    KernelArg A;
    A.K = Kind::Float;
    A.F = X;
    return A;
  }
  static KernelArg array(std::vector<int64_t> X) {
    KernelArg A;
    A.K = Kind::IntArray;
    A.Array = std::move(X);
    return A;
  }
};

/// A call of runtime kernel `Kernel` (a cuvil_k_* function) with Args.
struct KernelCall {
  std::string Kernel;
  std::vector<KernelArg> Args;
  /// Args 0 and 1 are the source and destination tensors of a pure copy:
  /// codegen drops the call when the planner put both at the same bytes.
  bool IsCopy = false;
};

/// A condition a node's code runs under: the bool scalar Cond is When.
struct RunCondition {
  const Value *Cond;
  bool When;
};

/// A run-time check after a node's code: run stops there and returns
/// Status (a CUVIL_ERR_* code) when the bool scalar Cond is true.
struct RunExit {
  const Value *Cond;
  int Status;
};

/// What one node of the graph lowered to.
struct NodeLowering {
  /// False for a view (its output is its input's buffer): the node has no
  /// code at all, not even a step of its own in run_v.
  bool HasCode = false;
  /// The calls that compute the node, in order (may be empty even when
  /// HasCode, e.g. a copy whose ends the planner merged).
  std::vector<KernelCall> Calls;
  /// The node runs only when all of these hold, outermost first: it
  /// computes results that only one branch of an If with a run-time
  /// condition needs (see ops/BranchGuards.h). Empty: it always runs.
  std::vector<RunCondition> RunsWhen;
  /// Where run stops after the node (OpDef::Exit); none: it goes on.
  std::optional<RunExit> Exit;
  /// Multicore builds: the node's work cut into shares that the cores run
  /// at once (OpDef::Split), share S being Shares[S]; Calls stays the
  /// whole. Empty: one core runs Calls.
  std::vector<std::vector<KernelCall>> Shares;
};

/// The lowering of a whole graph: entry I is node I of Graph::nodes().
using GraphLowering = std::vector<NodeLowering>;

/// A graph output whose shape depends on the branch an If with a run-time
/// condition takes (ops/sequence/ControlFlow.h): run records the branch,
/// and the caller asks for the shape.
struct BranchShapedOutput {
  size_t Output;     ///< Index among the graph's outputs.
  const Value *Cond; ///< The If's condition (true: the then branch).
  std::vector<int64_t> ThenShape, ElseShape;
  int64_t ThenBytes, ElseBytes;
};

} // namespace cuvil

#endif
