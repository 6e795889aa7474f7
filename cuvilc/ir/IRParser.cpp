//===- IRParser.cpp - Reads the textual IR back into a Graph --------------===//
//
// A recursive-descent parser over the characters (the syntax is in
// ir/IRPrinter.cpp). Whitespace and newlines separate nothing but tokens;
// `//` comments run to the end of the line. The first error stops parsing.
//
//===----------------------------------------------------------------------===//
#include "ir/Escape.h"
#include "ir/IRParserImpl.h"
#include "ir/IRSyntax.h"

#include <cerrno>
#include <fmt/format.h>

namespace cuvil {

namespace irparser {

bool Parser::parseType(DType &Ty, std::vector<int64_t> &Shape) {
  skipSpace();
  size_t At = Pos;
  std::string Name;
  while (Pos < Src.size() && std::isalnum(static_cast<unsigned char>(Src[Pos])))
    Name += Src[Pos++];
  bool Known = false;
  for (unsigned T = 0; T <= static_cast<unsigned>(DType::F64); ++T)
    if (dtypeName(static_cast<DType>(T)) == Name) {
      Ty = static_cast<DType>(T);
      Known = true;
    }
  if (!Known) {
    Pos = At;
    return expected("an element type (f32, i64, bool...)");
  }
  if (!expect('[', "after the element type"))
    return false;
  Shape.clear();
  if (consume(']'))
    return true;
  do {
    if (consume('?')) {
      Shape.push_back(UnknownDim);
    } else if (consume('*')) {
      Shape.push_back(UnknownRank);
    } else {
      size_t Start = Pos;
      while (Pos < Src.size() &&
             std::isdigit(static_cast<unsigned char>(Src[Pos])))
        ++Pos;
      if (Pos == Start || Pos - Start > 18)
        return expected("a dimension (a number, ? or *)");
      Shape.push_back(std::stoll(std::string(Src.substr(Start, Pos - Start))));
    }
  } while (consume('x'));
  return expect(']', "after the dimensions");
}

bool Parser::parseValueDef(std::string &Name, DType &Ty,
                           std::vector<int64_t> &Shape) {
  return expect('%', "before a value name") &&
         parseName(Name, "a value name") && expect(':', "after the name") &&
         parseType(Ty, Shape);
}

Value *Parser::define(const std::string &Name, DType Ty,
                      std::vector<int64_t> Shape, ValueKind Kind, size_t At) {
  if (Values.count(Name)) {
    fail(At, fmt::format("value %{} is defined twice", printable(Name)));
    return nullptr;
  }
  Value *V = G->addValue(Name, Ty, std::move(Shape), Kind);
  Values[Name] = V;
  return V;
}

bool Parser::parseUse(Value *&V) {
  V = nullptr;
  if (consume('<'))
    return (consumeWord("none") && expect('>', "after '<none'")) ||
           expected("'none>'");
  if (!expect('%', "before a value (or <none>)"))
    return false;
  size_t At = Pos;
  std::string Name;
  if (!parseName(Name, "a value name"))
    return false;
  auto It = Values.find(Name);
  if (It == Values.end())
    return fail(At, fmt::format("value %{} is used before it is defined",
                                printable(Name)));
  V = It->second;
  return true;
}

bool Parser::parseAttr(std::map<std::string, AttrValue> &Attrs) {
  size_t At = Pos;
  std::string Key;
  if (!parseName(Key, "an attribute name") || !expect('=', "after it"))
    return false;
  if (Attrs.count(Key))
    return fail(At,
                fmt::format("attribute '{}' is given twice", printable(Key)));
  AttrValue &A = Attrs[Key];
  std::string S;
  if (peek() == '"') {
    if (!parseString(S))
      return false;
    A = S;
    return true;
  }
  bool Floats = consumeWord("floats"),
       Strings = !Floats && consumeWord("strings");
  if (Floats || Strings || peek() == '[') {
    if (!expect('[', "to start the list"))
      return false;
    std::vector<std::string> Items;
    Strings |= peek() == '"';
    if (peek() != ']')
      do {
        skipSpace();
        size_t ItemAt = Pos;
        if (Strings ? !parseString(S) : !parseToken(S)) {
          Pos = ItemAt;
          return expected(Strings ? "a string" : "a number");
        }
        Floats |= !Strings && !isInteger(S);
        Items.push_back(S);
      } while (consume(','));
    if (!expect(']', "after the list"))
      return false;
    if (Strings) {
      A = Items;
      return true;
    }
    std::vector<int64_t> Ints;
    std::vector<float> Fs;
    for (const std::string &T : Items) {
      char *End = nullptr;
      errno = 0;
      if (Floats)
        Fs.push_back(std::strtof(T.c_str(), &End));
      else
        Ints.push_back(std::strtoll(T.c_str(), &End, 10));
      if (*End || (!Floats && errno))
        return fail(At, fmt::format("'{}' is not a number", printable(T)));
    }
    A = Floats ? AttrValue(Fs) : AttrValue(Ints);
    return true;
  }
  skipSpace();
  size_t ValueAt = Pos;
  if (!parseToken(S))
    return expected("an attribute value (number, string or list)");
  char *End = nullptr;
  errno = 0;
  if (isInteger(S))
    A = static_cast<int64_t>(std::strtoll(S.c_str(), &End, 10));
  else
    A = std::strtof(S.c_str(), &End);
  if (*End || (isInteger(S) && errno))
    return fail(ValueAt, fmt::format("'{}' is not a number", printable(S)));
  return true;
}

bool Parser::parseNode() {
  std::vector<PendingOutput> Outs;
  unsigned OutPos = 0;
  if (peek() == '%' || peek() == '<') {
    do {
      if (consume('<')) {
        if (!consumeWord("none") || !expect('>', "after '<none'"))
          return expected("'none>'");
      } else {
        PendingOutput O;
        O.At = Pos + 1;
        O.Pos = OutPos;
        if (!parseValueDef(O.Name, O.Ty, O.Shape))
          return false;
        Outs.push_back(std::move(O));
      }
      ++OutPos;
    } while (consume(','));
    if (!expect('=', "after the outputs"))
      return false;
  }
  // The operator: "Quoted", Op or domain.Op, and @opset.
  std::string OpType, Domain;
  bool Prefixed = false;
  size_t OpAt = Pos;
  if (peek() == '"') {
    if (!parseString(OpType))
      return false;
  } else {
    while (Pos < Src.size() && isOpNameChar(Src[Pos]))
      OpType += Src[Pos++];
    if (OpType.empty())
      return expected("an operator name");
    size_t Dot = OpType.rfind('.');
    if (Dot != std::string::npos) {
      Domain = OpType.substr(0, Dot);
      OpType = OpType.substr(Dot + 1);
      Prefixed = true;
    }
  }
  int64_t NodeOpset = Opset;
  if (consume('@') && !parseInt(NodeOpset, "an opset version"))
    return false;
  std::vector<Value *> Ins;
  if (!expect('(', "after the operator"))
    return false;
  if (peek() != ')')
    do {
      Ins.push_back(nullptr);
      if (!parseUse(Ins.back()))
        return false;
    } while (consume(','));
  if (!expect(')', "after the inputs"))
    return false;
  std::map<std::string, AttrValue> Attrs;
  if (consume('{')) {
    do
      if (!parseAttr(Attrs))
        return false;
    while (consume(','));
    if (!expect('}', "after the attributes"))
      return false;
  }
  if (Prefixed) {
    if (Attrs.count(std::string(DomainAttr)))
      return fail(OpAt, "the domain is given twice (prefix and attribute)");
    Attrs[std::string(DomainAttr)] = Domain;
  } else if (auto It = Attrs.find(std::string(DomainAttr)); It != Attrs.end()) {
    if (auto *S = std::get_if<std::string>(&It->second))
      Domain = *S;
  }
  std::string Name;
  bool Named = consumeWord("name");
  if (Named &&
      (!expect('=', "after 'name'") || !parseName(Name, "a node name")))
    return false;
  Origin Orig;
  if (consume('#'))
    do {
      int64_t Index;
      Orig.Names.emplace_back();
      if (!parseName(Orig.Names.back(), "an origin name") ||
          !expect('#', "after the origin name") ||
          !parseInt(Index, "an origin index"))
        return false;
      Orig.Indices.push_back(static_cast<int>(Index));
    } while (consume(','));

  std::vector<Value *> OutVals;
  std::vector<unsigned> Positions;
  for (PendingOutput &O : Outs) {
    OutVals.push_back(define(O.Name, O.Ty, std::move(O.Shape),
                             ValueKind::Intermediate, O.At));
    if (!OutVals.back())
      return false;
    Positions.push_back(O.Pos);
  }
  if (!Named)
    Name = defaultNodeName(Orig, Outs.empty() ? OpType : Outs[0].Name);
  const OpDef *Def = Lookup(Domain, OpType);
  if (Prefixed && Domain + "." == InternalPrefix) {
    // An internal op: its type keeps the prefix, it has no domain attribute.
    OpType = std::string(InternalPrefix) + OpType;
    Attrs.erase(std::string(DomainAttr));
  }
  Node *N = G->addNode(OpType, Name, Def, Ins, {});
  for (auto &[K, A] : Attrs)
    N->setAttr(K, std::move(A));
  N->setOpset(NodeOpset);
  N->origin() = std::move(Orig);
  G->setNodeOutputs(N, std::move(OutVals), std::move(Positions));
  return true;
}

bool Parser::parseStatement() {
  size_t At = Pos;
  std::string Name;
  DType Ty;
  std::vector<int64_t> Shape;
  if (consumeWord("input")) {
    skipSpace();
    At = Pos + 1;
    if (!parseValueDef(Name, Ty, Shape))
      return false;
    Value *V = define(Name, Ty, std::move(Shape), ValueKind::Input, At);
    if (V)
      G->inputs().push_back(V);
    return V != nullptr;
  }
  if (consumeWord("const")) {
    skipSpace();
    At = Pos + 1;
    if (!parseValueDef(Name, Ty, Shape) || !expect('=', "before the data"))
      return false;
    Value *V = define(Name, Ty, std::move(Shape), ValueKind::Constant, At);
    return V && parseData(*V);
  }
  return parseNode();
}

llvm::Expected<std::unique_ptr<Graph>> Parser::run() {
  std::string Name;
  bool Ok = (consumeWord("graph") || expected("'graph'")) &&
            parseName(Name, "the graph's name");
  if (Ok) {
    G = std::make_unique<Graph>(Name);
    if (consumeWord("opset"))
      Ok = parseInt(Opset, "the graph's opset");
  }
  bool Returned = false;
  while (Ok && peek() && !(Returned = consumeWord("return")))
    Ok = parseStatement();
  if (Ok && !Returned)
    Ok = expected("'return' and the graph's outputs");
  if (Ok && peek() == '%')
    do {
      Value *V;
      Ok = parseUse(V);
      if (Ok)
        G->outputs().push_back(V);
    } while (Ok && consume(','));
  if (Ok && peek())
    Ok = expected("the end of the input after 'return'");
  if (!Ok)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s",
                                   Error.c_str());
  return std::move(G);
}

} // namespace irparser

llvm::Expected<std::unique_ptr<Graph>>
parseIR(std::string_view Text, const OpLookup &Lookup, std::string_view File) {
  return irparser::Parser(Text, Lookup, File).run();
}

} // namespace cuvil
