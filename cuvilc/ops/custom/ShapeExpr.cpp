//===- ShapeExpr.cpp - Parse and evaluate custom ops' shape expressions ---===//
#include "ops/custom/ShapeExpr.h"

#include "ir/Diagnostic.h"

#include <cctype>
#include <limits>

namespace cuvil {
namespace {

using Tree = ShapeExpr::Tree;
using TreePtr = std::shared_ptr<const Tree>;

/// Recursive descent over Text:
///   expr    := term (('+' | '-') term)*
///   term    := unary (('*' | '/' | '%') unary)*
///   unary   := '-' unary | primary
///   primary := INT | '(' expr ')' | inK '[' ['-'] INT ']'
///            | ('rank' | 'numel') '(' inK ')' | 'attr' '.' NAME
class Parser {
public:
  explicit Parser(std::string_view Text) : Text(Text) {}

  llvm::Expected<TreePtr> expr() {
    auto L = term();
    if (!L)
      return L;
    while (peek() == '+' || peek() == '-') {
      ShapeExpr::Kind K =
          Text[Pos++] == '+' ? ShapeExpr::Kind::Add : ShapeExpr::Kind::Sub;
      auto R = term();
      if (!R)
        return R;
      L = binary(K, *L, *R);
    }
    return L;
  }

  /// Position after skipping blanks (Text.size() at the end).
  size_t at() {
    skip();
    return Pos;
  }
  char peek() {
    skip();
    return Pos < Text.size() ? Text[Pos] : '\0';
  }
  llvm::Error expected(const char *What) {
    size_t P = at();
    if (P >= Text.size())
      return makeError("expected {} at the end of '{}'", What, Text);
    return makeError("expected {} at column {} of '{}'", What, P + 1, Text);
  }
  bool eat(char C) {
    if (peek() != C)
      return false;
    ++Pos;
    return true;
  }

private:
  void skip() {
    while (Pos < Text.size() && (Text[Pos] == ' ' || Text[Pos] == '\t'))
      ++Pos;
  }
  static TreePtr binary(ShapeExpr::Kind K, TreePtr L, TreePtr R) {
    auto T = std::make_shared<Tree>();
    T->K = K;
    T->L = std::move(L);
    T->R = std::move(R);
    return T;
  }
  std::string_view word() {
    skip();
    size_t Start = Pos;
    while (Pos < Text.size() &&
           (std::isalnum(static_cast<unsigned char>(Text[Pos])) ||
            Text[Pos] == '_'))
      ++Pos;
    return Text.substr(Start, Pos - Start);
  }
  std::optional<int64_t> integer() {
    skip();
    if (Pos >= Text.size() ||
        !std::isdigit(static_cast<unsigned char>(Text[Pos])))
      return std::nullopt;
    int64_t V = 0;
    while (Pos < Text.size() &&
           std::isdigit(static_cast<unsigned char>(Text[Pos]))) {
      if (__builtin_mul_overflow(V, 10, &V) ||
          __builtin_add_overflow(V, Text[Pos] - '0', &V))
        return std::nullopt;
      ++Pos;
    }
    return V;
  }

  llvm::Expected<TreePtr> term() {
    auto L = unary();
    if (!L)
      return L;
    while (peek() == '*' || peek() == '/' || peek() == '%') {
      char Op = Text[Pos++];
      auto R = unary();
      if (!R)
        return R;
      L = binary(Op == '*'   ? ShapeExpr::Kind::Mul
                 : Op == '/' ? ShapeExpr::Kind::Div
                             : ShapeExpr::Kind::Rem,
                 *L, *R);
    }
    return L;
  }

  llvm::Expected<TreePtr> unary() {
    if (!eat('-'))
      return primary();
    auto X = unary();
    if (!X)
      return X;
    auto T = std::make_shared<Tree>();
    T->K = ShapeExpr::Kind::Neg;
    T->L = std::move(*X);
    return TreePtr(T);
  }

  /// inK: the index K.
  llvm::Expected<unsigned> input() {
    size_t Start = at();
    std::string_view W = word();
    bool In = false;
    std::optional<unsigned> K = tensorRef(W, In);
    if (!K || !In) {
      Pos = Start;
      return expected("an input such as in0");
    }
    return *K;
  }

  llvm::Expected<TreePtr> primary() {
    auto T = std::make_shared<Tree>();
    if (eat('(')) {
      auto X = expr();
      if (!X)
        return X;
      if (!eat(')'))
        return expected("')'");
      return X;
    }
    if (std::isdigit(static_cast<unsigned char>(peek()))) {
      size_t Start = at();
      auto V = integer();
      if (!V) {
        Pos = Start;
        return expected("an integer below 2^63");
      }
      T->K = ShapeExpr::Kind::Const;
      T->Value = *V;
      return TreePtr(T);
    }
    size_t Start = at();
    std::string_view W = word();
    if (W == "attr") {
      if (!eat('.'))
        return expected("'.' after attr");
      std::string_view Name = word();
      if (Name.empty())
        return expected("an attribute name after 'attr.'");
      T->K = ShapeExpr::Kind::Attr;
      T->Attr = std::string(Name);
      return TreePtr(T);
    }
    if (W == "rank" || W == "numel") {
      T->K = W == "rank" ? ShapeExpr::Kind::Rank : ShapeExpr::Kind::Numel;
      if (!eat('('))
        return expected("'(' after the function name");
      auto K = input();
      if (!K)
        return K.takeError();
      T->Input = *K;
      if (!eat(')'))
        return expected("')'");
      return TreePtr(T);
    }
    Pos = Start;
    auto K = input();
    if (!K) {
      llvm::consumeError(K.takeError());
      return expected("a number, '(', inK[axis], rank(inK), numel(inK) or "
                      "attr.NAME");
    }
    T->K = ShapeExpr::Kind::Dim;
    T->Input = *K;
    if (!eat('['))
      return expected("'[' after the input (a dimension such as in0[1])");
    bool Neg = eat('-');
    auto Axis = integer();
    if (!Axis)
      return expected("an axis (an integer)");
    T->Value = Neg ? -*Axis : *Axis;
    if (!eat(']'))
      return expected("']'");
    return TreePtr(T);
  }

  std::string_view Text;
  size_t Pos = 0;
};

using Result = llvm::Expected<std::optional<int64_t>>;

Result eval(const Tree &T, const ShapeExpr::Env &E) {
  using K = ShapeExpr::Kind;
  auto Shape = [&](unsigned I) -> llvm::Expected<const std::vector<int64_t> *> {
    const std::vector<int64_t> *S = E.Shape(I);
    if (!S)
      return makeError("input {} is absent", I);
    return S;
  };
  switch (T.K) {
  case K::Const: return T.Value;
  case K::Attr: return E.IntAttr(T.Attr);
  case K::Dim: {
    auto S = Shape(T.Input);
    if (!S)
      return S.takeError();
    int64_t R = static_cast<int64_t>((*S)->size());
    if (T.Value < -R || T.Value >= R)
      return makeError("input {} has rank {}, no axis {}", T.Input, R, T.Value);
    int64_t D = (**S)[T.Value < 0 ? T.Value + R : T.Value];
    if (D < 0)
      return std::nullopt;
    return D;
  }
  case K::Rank: {
    auto S = Shape(T.Input);
    if (!S)
      return S.takeError();
    return static_cast<int64_t>((*S)->size());
  }
  case K::Numel: {
    auto S = Shape(T.Input);
    if (!S)
      return S.takeError();
    int64_t N = 1;
    for (int64_t D : **S) {
      if (D < 0)
        return std::nullopt;
      if (__builtin_mul_overflow(N, D, &N))
        return makeError("numel(in{}) overflows 64 bits", T.Input);
    }
    return N;
  }
  case K::Neg: {
    auto X = eval(*T.L, E);
    if (!X || !*X)
      return X;
    if (**X == std::numeric_limits<int64_t>::min())
      return makeError("-({}) overflows 64 bits", **X);
    return -**X;
  }
  default: break;
  }
  auto L = eval(*T.L, E);
  if (!L)
    return L;
  auto R = eval(*T.R, E);
  if (!R)
    return R;
  if (!*L || !*R)
    return std::nullopt;
  int64_t A = **L, B = **R, V = 0;
  bool Overflow = false;
  switch (T.K) {
  case K::Add: Overflow = __builtin_add_overflow(A, B, &V); break;
  case K::Sub: Overflow = __builtin_sub_overflow(A, B, &V); break;
  case K::Mul: Overflow = __builtin_mul_overflow(A, B, &V); break;
  default:
    if (B == 0)
      return makeError("division by zero ({} {} 0)", A,
                       T.K == K::Div ? '/' : '%');
    if (A == std::numeric_limits<int64_t>::min() && B == -1)
      Overflow = true;
    else
      V = T.K == K::Div ? A / B : A % B;
    break;
  }
  if (Overflow)
    return makeError("arithmetic on {} and {} overflows 64 bits", A, B);
  return V;
}

void visit(const Tree &T, llvm::function_ref<void(unsigned)> OnInput,
           llvm::function_ref<void(const std::string &)> OnAttr) {
  using K = ShapeExpr::Kind;
  if (T.K == K::Dim || T.K == K::Rank || T.K == K::Numel)
    OnInput(T.Input);
  if (T.K == K::Attr)
    OnAttr(T.Attr);
  if (T.L)
    visit(*T.L, OnInput, OnAttr);
  if (T.R)
    visit(*T.R, OnInput, OnAttr);
}

} // namespace

std::optional<unsigned> tensorRef(std::string_view Text, bool &In) {
  std::string_view Digits;
  if (Text.substr(0, 2) == "in") {
    In = true;
    Digits = Text.substr(2);
  } else if (Text.substr(0, 3) == "out") {
    In = false;
    Digits = Text.substr(3);
  } else {
    return std::nullopt;
  }
  if (Digits.empty() || Digits.size() > 4 ||
      (Digits[0] == '0' && Digits.size() > 1))
    return std::nullopt;
  unsigned K = 0;
  for (char C : Digits) {
    if (!std::isdigit(static_cast<unsigned char>(C)))
      return std::nullopt;
    K = K * 10 + static_cast<unsigned>(C - '0');
  }
  return K;
}

llvm::Expected<ShapeExpr> ShapeExpr::parse(std::string_view Text) {
  Parser P(Text);
  auto T = P.expr();
  if (!T)
    return T.takeError();
  if (P.at() != Text.size())
    return P.expected("an operator or the end");
  ShapeExpr E;
  E.Root = std::move(*T);
  E.Text = std::string(Text);
  return E;
}

llvm::Expected<std::optional<int64_t>> ShapeExpr::evaluate(const Env &E) const {
  auto V = eval(*Root, E);
  if (!V)
    return makeError("'{}': {}", Text, llvm::toString(V.takeError()));
  return V;
}

void ShapeExpr::forEachRef(
    llvm::function_ref<void(unsigned)> OnInput,
    llvm::function_ref<void(const std::string &)> OnAttr) const {
  visit(*Root, OnInput, OnAttr);
}

llvm::Expected<ShapeRule> ShapeRule::parse(std::string_view Text) {
  ShapeRule R;
  R.Text = std::string(Text);
  size_t B = Text.find_first_not_of(" \t");
  size_t E = Text.find_last_not_of(" \t");
  std::string_view Body =
      B == std::string_view::npos ? "" : Text.substr(B, E - B + 1);
  bool In = false;
  if (std::optional<unsigned> K = tensorRef(Body, In)) {
    if (!In)
      return makeError("'{}': a shape copies an input's (inK), not an "
                       "output's",
                       Text);
    R.CopyOf = K;
    return R;
  }
  if (Body.size() < 2 || Body.front() != '[' || Body.back() != ']')
    return makeError("'{}': expected inK (the shape of input K) or a list "
                     "of dimensions such as [in0[0], attr.n * 2]",
                     Text);
  Body = Body.substr(1, Body.size() - 2);
  if (Body.find_first_not_of(" \t") == std::string_view::npos)
    return R; // [] : a scalar
  // Commas only separate dimensions (expressions hold none).
  for (size_t Start = 0;;) {
    size_t Comma = Body.find(',', Start);
    std::string_view Item = Body.substr(Start, Comma == std::string_view::npos
                                                   ? std::string_view::npos
                                                   : Comma - Start);
    size_t First = Item.find_first_not_of(" \t");
    Item = First == std::string_view::npos
               ? ""
               : Item.substr(First, Item.find_last_not_of(" \t") - First + 1);
    auto X = ShapeExpr::parse(Item);
    if (!X)
      return makeError("'{}': dimension {}: {}", Text, R.Dims.size(),
                       llvm::toString(X.takeError()));
    R.Dims.push_back(std::move(*X));
    if (Comma == std::string_view::npos)
      break;
    Start = Comma + 1;
  }
  return R;
}

llvm::Expected<std::vector<int64_t>>
ShapeRule::evaluate(const ShapeExpr::Env &E) const {
  if (CopyOf) {
    const std::vector<int64_t> *S = E.Shape(*CopyOf);
    if (!S)
      return makeError("'{}': input {} is absent", Text, *CopyOf);
    return *S;
  }
  std::vector<int64_t> Out;
  for (const ShapeExpr &X : Dims) {
    auto V = X.evaluate(E);
    if (!V)
      return V.takeError();
    if (*V && **V < 0)
      return makeError("'{}' is {}: a dimension cannot be negative", X.text(),
                       **V);
    Out.push_back(V->value_or(-1));
  }
  return Out;
}

} // namespace cuvil
