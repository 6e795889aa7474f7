//===- CustomOp.h - Operators the user declares (--custom-ops) --*- C++ -*-===//
//
// A firmware team compiles a model with an op of its own domain (a vendor's
// fused block, a preprocessing step) by declaring it in a TOML file (format:
// docs/custom-ops.md) and providing its C kernel in the firmware. Each
// declaration becomes an OpDef, registered for one compilation in a
// RuntimeOps table looked up by (domain, name): the importer gives the
// op's nodes that record, shape inference uses its shape rules, the
// planner places its outputs like any other op's, and codegen calls its
// kernel as an external function the object leaves undefined.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_CUSTOM_CUSTOMOP_H
#define CUVIL_OPS_CUSTOM_CUSTOMOP_H

#include "ops/OpRegistry.h"
#include "ops/RuntimeOps.h"
#include "ops/custom/ShapeExpr.h"

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace cuvil {

struct CustomOp;

/// The record registered for a declared op. The OpDef comes first in a
/// standard-layout struct, so a node's def() leads back to the declaration
/// (customOpOf).
struct CustomOpRecord {
  OpDef Def;
  const CustomOp *Decl;
};
static_assert(std::is_standard_layout_v<CustomOpRecord>);

/// The declaration behind D if it is a declared op's record, else null.
const CustomOp *customOpOf(const OpDef *D);

/// The type of a declared attribute.
enum class CustomAttrKind : uint8_t { Int, Float, Ints, String };

struct CustomAttr {
  std::string Name;
  CustomAttrKind Kind = CustomAttrKind::Int;
  bool Required = false;
  AttrValue Default; ///< When not Required.
};

/// A declared input or output.
struct CustomTensor {
  std::string Name;
  /// Inputs: the element types allowed. Outputs: the one it has, unless
  /// DTypeOf says it has input K's.
  std::vector<DType> DTypes;
  std::optional<unsigned> DTypeOf;
  bool Optional = false; ///< Inputs only.
  ShapeRule Shape;       ///< Outputs only.
};

/// One argument of the op's kernel, in the declared order.
struct CustomParam {
  enum class Kind : uint8_t {
    Input,     ///< const T *: input Index's buffer (NULL when absent).
    Output,    ///< T *: output Index's buffer.
    FloatAttr, ///< float: attribute Attr.
    IntsAttr,  ///< const int64_t *: attribute Attr's values.
    Int,       ///< int64_t: the value of Expr.
  };
  Kind K = Kind::Int;
  unsigned Index = 0;
  std::string Attr;
  std::optional<ShapeExpr> Expr;
  std::string Text; ///< As declared (after "NAME =").
  std::string Name; ///< Its name in the prototype; empty: derived.
};

struct CustomOp {
  std::string Name, Domain;
  std::string File; ///< The declaring file, and the line of the [[op]].
  unsigned Line = 0;
  std::string Kernel; ///< The C symbol the firmware defines.
  std::vector<CustomTensor> Inputs, Outputs;
  std::vector<CustomAttr> Attrs;
  std::vector<CustomParam> Params;
  /// Multiply-accumulates of one execution (for reports); none: 0.
  std::optional<ShapeExpr> Macs;
  /// Output 0 may be written over input 0 (element-wise kernels).
  bool InPlace = false;
  /// The record nodes of this op point to.
  CustomOpRecord Record{};

  const CustomAttr *attr(const std::string &N) const;
  /// `void kernel(const float *x, float *y, float alpha, int64_t n)`: the
  /// prototype the firmware's definition must match.
  std::string prototype() const;
};

/// The ops of one --custom-ops file, registered in Registry.
class CustomOpSet {
public:
  const RuntimeOps &registry() const { return Registry; }
  const std::vector<std::unique_ptr<CustomOp>> &ops() const { return Ops; }
  /// Adds Op (validated) and registers its record.
  void add(std::unique_ptr<CustomOp> Op);

private:
  std::vector<std::unique_ptr<CustomOp>> Ops;
  RuntimeOps Registry;
};

/// Reads and validates the declarations in the TOML file at Path. Errors
/// name the file, line, op and field.
llvm::Expected<std::unique_ptr<CustomOpSet>>
loadCustomOps(const std::string &Path);
/// The same for Text, the contents of a file called Path.
llvm::Expected<std::unique_ptr<CustomOpSet>>
parseCustomOps(std::string_view Text, const std::string &Path);

/// What the expressions of op C read on node N: its inputs' shapes and its
/// int attributes (or their declared defaults).
struct CustomEnv {
  CustomEnv(const CustomOp &C, const Node &N);
  ShapeExpr::Env env() const {
    return {[this](unsigned I) { return shape(I); },
            [this](const std::string &A) { return intAttr(A); }};
  }

private:
  const std::vector<int64_t> *shape(unsigned I) const;
  int64_t intAttr(const std::string &A) const;
  const CustomOp &C;
  const Node &N;
};

/// Gives N's outputs of unknown shape the shape of their rule when its
/// inputs' shapes are known; a rule that fails is an error naming N.
llvm::Error applyCustomShapes(const CustomOp &C, const Node &N);

/// The shape of output Out of node N by its declared rule.
llvm::Expected<std::vector<int64_t>>
customOutputShape(const CustomOp &C, const Node &N, unsigned Out);

} // namespace cuvil

#endif
