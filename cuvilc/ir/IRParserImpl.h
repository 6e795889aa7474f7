//===- IRParserImpl.h - The IR parser's state (internal) -------*- C++ -*-===//
//
// Shared by ir/IRParser.cpp (graph structure) and ir/IRTokens.cpp (tokens
// and constant data); users include ir/IRParser.h.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_IR_IRPARSERIMPL_H
#define CUVIL_IR_IRPARSERIMPL_H

#include "ir/IRParser.h"

#include <fmt/format.h>
#include <map>
#include <string>
#include <unordered_map>

namespace cuvil::irparser {

/// A node's output, defined once the node's inputs are read.
struct PendingOutput {
  std::string Name;
  DType Ty;
  std::vector<int64_t> Shape;
  unsigned Pos;
  size_t At;
};

/// Recursive descent over the characters; the first error is kept.
class Parser {
public:
  Parser(std::string_view Src, const OpLookup &Lookup, std::string_view File)
      : Src(Src), Lookup(Lookup), File(File) {}

  llvm::Expected<std::unique_ptr<Graph>> run();

private:
  // Characters and tokens.
  void skipSpace();
  char peek() {
    skipSpace();
    return Pos < Src.size() ? Src[Pos] : '\0';
  }
  bool consume(char C) {
    if (peek() != C)
      return false;
    ++Pos;
    return true;
  }
  bool consumeWord(std::string_view W);
  bool fail(size_t At, std::string Msg);
  bool expected(std::string_view What);
  bool expect(char C, std::string_view Where) {
    return consume(C) || expected(fmt::format("'{}' {}", C, Where));
  }
  bool parseString(std::string &Out);
  bool parseName(std::string &Out, std::string_view What);
  bool parseToken(std::string &Out);
  bool parseInt(int64_t &Out, std::string_view What);

  // Grammar.
  bool parseType(DType &Ty, std::vector<int64_t> &Shape);
  bool parseValueDef(std::string &Name, DType &Ty, std::vector<int64_t> &S);
  Value *define(const std::string &Name, DType Ty, std::vector<int64_t> S,
                ValueKind Kind, size_t At);
  bool parseUse(Value *&V);
  bool parseElement(DType Ty, std::vector<uint8_t> &Out);
  bool parseData(Value &V);
  bool parseAttr(std::map<std::string, AttrValue> &Attrs);
  bool parseNode();
  bool parseStatement();

  std::string_view Src;
  const OpLookup &Lookup;
  std::string_view File;
  size_t Pos = 0;
  std::string Error;
  std::unique_ptr<Graph> G;
  std::unordered_map<std::string, Value *> Values;
  int64_t Opset = 0;
};

/// Whether T is a decimal integer (optional sign).
bool isInteger(const std::string &T);

} // namespace cuvil::irparser

#endif
