//===- ShapeExpr.h - Integer expressions of custom ops ----------*- C++ -*-===//
//
// A user-declared op (see CustomOp.h) states the shape of each output and
// the integer arguments of its kernel as small expressions over its inputs'
// dimensions and its attributes:
//
//   in0[0]  in1[-1]        dimension of an input (negative: from the end)
//   rank(in0) numel(in0)   rank and element count of an input
//   attr.channels          an int attribute
//   3  ( )  -x  + - * / %  integer arithmetic (C division and remainder)
//
// A shape rule is either `inK` (output has input K's shape) or a list
// `[e0, e1, ...]` of one expression per output dimension.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_CUSTOM_SHAPEEXPR_H
#define CUVIL_OPS_CUSTOM_SHAPEEXPR_H

#include <cstdint>
#include <functional>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/Error.h>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

/// One parsed integer expression (immutable; copies share the tree).
class ShapeExpr {
public:
  enum class Kind : uint8_t {
    Const,
    Dim,
    Rank,
    Numel,
    Attr,
    Neg,
    Add,
    Sub,
    Mul,
    Div,
    Rem
  };
  struct Tree {
    Kind K = Kind::Const;
    int64_t Value = 0;  ///< Const: the value; Dim: the axis.
    unsigned Input = 0; ///< Dim, Rank, Numel: the input.
    std::string Attr;   ///< Attr: the attribute's name.
    std::shared_ptr<const Tree> L, R;
  };

  /// What an expression reads while it is evaluated. Shapes(I) is input
  /// I's shape, or null when the node has no input I; a dimension may be
  /// unknown (negative). IntAttr(Name) is the int attribute's value.
  struct Env {
    std::function<const std::vector<int64_t> *(unsigned)> Shape;
    std::function<int64_t(const std::string &)> IntAttr;
  };

  /// Parses Text; errors say what was expected where ("at column 7").
  static llvm::Expected<ShapeExpr> parse(std::string_view Text);

  /// The value, nullopt when it depends on an unknown dimension; errors for
  /// a missing input, an axis out of range, a division by zero, overflow.
  llvm::Expected<std::optional<int64_t>> evaluate(const Env &E) const;

  /// Visits every input index and attribute name the expression reads.
  void forEachRef(llvm::function_ref<void(unsigned Input)> OnInput,
                  llvm::function_ref<void(const std::string &)> OnAttr) const;

  /// The expression as written (for messages).
  const std::string &text() const { return Text; }
  const Tree &tree() const { return *Root; }

private:
  std::shared_ptr<const Tree> Root;
  std::string Text;
};

/// The shape of one output: a copy of an input's, or one expression per
/// dimension.
struct ShapeRule {
  std::optional<unsigned> CopyOf;
  std::vector<ShapeExpr> Dims;
  std::string Text;

  static llvm::Expected<ShapeRule> parse(std::string_view Text);
  /// The output shape; a dimension that depends on an unknown one is
  /// negative. Errors as ShapeExpr::evaluate, and for a negative result.
  llvm::Expected<std::vector<int64_t>> evaluate(const ShapeExpr::Env &E) const;
};

/// Whether Text is `inK` or `outK`: then the index, and In says which.
std::optional<unsigned> tensorRef(std::string_view Text, bool &In);

} // namespace cuvil

#endif
