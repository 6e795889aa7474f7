//===- CustomOpToml.cpp - --custom-ops FILE -> CustomOpSet ----------------===//
// Header-only, exception-free toml++, as in target/TargetInfo.cpp (whose
// notes on TOML_ASSERT apply here too: the file is the user's).
#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#define TOML_ASSERT(expr) static_cast<void>(0)
#include "ops/custom/CustomOp.h"

#include "ir/Diagnostic.h"
#include "ir/Escape.h"

#include <algorithm>
#include <fmt/ranges.h>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <toml++/toml.h>

namespace cuvil {
namespace {

constexpr DType AllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I8,
                               DType::U8,  DType::I16, DType::U16,  DType::I32,
                               DType::U32, DType::I64, DType::U64,  DType::Bool,
                               DType::F64};

std::optional<DType> dtypeNamed(std::string_view S) {
  for (DType T : AllDTypes)
    if (dtypeName(T) == S)
      return T;
  return std::nullopt;
}

/// A name the expressions and the prototype can use: [A-Za-z_][A-Za-z0-9_]*.
bool isWord(const std::string &S) { return !S.empty() && cIdentifier(S) == S; }

/// Reads one file's [[op]] tables. Every error is "FILE:LINE: op 'NAME':
/// FIELD: reason" (without the op before its name is known).
class Reader {
public:
  explicit Reader(const std::string &Path) : Path(Path) {}

  llvm::Expected<std::unique_ptr<CustomOpSet>> read(const toml::table &Root);

private:
  template <typename... Args>
  llvm::Error fail(const toml::node &At, const std::string &Field,
                   fmt::format_string<Args...> Fmt, Args &&...A) {
    std::string Where = fmt::format("{}:{}: ", Path, At.source().begin.line);
    if (!OpName.empty())
      Where += fmt::format("op '{}': ", printable(OpName));
    if (!Field.empty())
      Where += Field + ": ";
    return makeError("{}{}", Where, fmt::format(Fmt, std::forward<Args>(A)...));
  }
  /// Refuses keys of T outside Known.
  llvm::Error onlyKeys(const toml::table &T, const std::string &Where,
                       std::initializer_list<std::string_view> Known);
  llvm::Expected<std::string> string(const toml::table &T, const char *Key,
                                     const std::string &Field, bool Required);
  /// The required "name" of an input, output or attribute: a C name.
  llvm::Expected<std::string> nameField(const toml::table &T,
                                        const std::string &Field);
  llvm::Expected<const toml::array *> tables(const toml::table &T,
                                             const char *Key);
  llvm::Expected<std::unique_ptr<CustomOp>> op(const toml::table &T);
  llvm::Error tensor(const toml::table &T, CustomOp &C, bool Input,
                     unsigned Index);
  llvm::Error attribute(const toml::table &T, CustomOp &C, unsigned Index);
  llvm::Error param(const toml::node &N, CustomOp &C, unsigned Index);
  /// Refs of X outside C's inputs and int attributes.
  llvm::Error checkRefs(const ShapeExpr &X, const CustomOp &C,
                        const toml::node &At, const std::string &Field);

  const std::string &Path;
  std::string OpName;
};

llvm::Error Reader::onlyKeys(const toml::table &T, const std::string &Where,
                             std::initializer_list<std::string_view> Known) {
  for (auto &&[K, V] : T)
    if (std::find(Known.begin(), Known.end(), K.str()) == Known.end())
      return fail(V, Where, "unknown field '{}' (expected one of {})",
                  printable(K.str()), fmt::join(Known, ", "));
  return llvm::Error::success();
}

llvm::Expected<std::string> Reader::string(const toml::table &T,
                                           const char *Key,
                                           const std::string &Field,
                                           bool Required) {
  const toml::node *N = T.get(Key);
  if (!N) {
    if (Required)
      return fail(T, Field, "missing required field '{}'", Key);
    return std::string();
  }
  const auto *S = N->as_string();
  if (!S)
    return fail(*N, Field.empty() ? Key : Field + "." + Key,
                "must be a string");
  return S->get();
}

llvm::Expected<std::string> Reader::nameField(const toml::table &T,
                                              const std::string &Field) {
  auto Name = string(T, "name", Field, true);
  if (Name && !isWord(*Name))
    return fail(*T.get("name"), Field + ".name", "'{}' is not a C identifier",
                printable(*Name));
  return Name;
}

llvm::Expected<const toml::array *> Reader::tables(const toml::table &T,
                                                   const char *Key) {
  const toml::node *N = T.get(Key);
  if (!N)
    return nullptr;
  const toml::array *A = N->as_array();
  if (!A)
    return fail(*N, Key,
                "must be an array of tables ([[op.{}]] or "
                "inline {{ ... }})",
                Key);
  for (const toml::node &E : *A)
    if (!E.is_table())
      return fail(E, Key, "every entry must be a table");
  return A;
}

llvm::Error Reader::checkRefs(const ShapeExpr &X, const CustomOp &C,
                              const toml::node &At, const std::string &Field) {
  llvm::Error Err = llvm::Error::success();
  X.forEachRef(
      [&](unsigned I) {
        if (!Err && I >= C.Inputs.size())
          Err = fail(At, Field, "'{}' reads input {}, but the op declares {}",
                     X.text(), I, C.Inputs.size());
      },
      [&](const std::string &A) {
        if (Err)
          return;
        const CustomAttr *D = C.attr(A);
        if (!D)
          Err = fail(At, Field,
                     "'{}' reads attribute '{}', which is not "
                     "declared",
                     X.text(), A);
        else if (D->Kind != CustomAttrKind::Int)
          Err = fail(At, Field,
                     "'{}' reads attribute '{}', which is not of "
                     "kind int",
                     X.text(), A);
      });
  return Err;
}

llvm::Error Reader::tensor(const toml::table &T, CustomOp &C, bool Input,
                           unsigned Index) {
  std::string Field = fmt::format("{} {}", Input ? "input" : "output", Index);
  if (auto E = Input ? onlyKeys(T, Field, {"name", "dtype", "optional"})
                     : onlyKeys(T, Field, {"name", "dtype", "shape"}))
    return E;
  CustomTensor D;
  auto Name = nameField(T, Field);
  if (!Name)
    return Name.takeError();
  D.Name = *Name;
  const toml::node *DT = T.get("dtype");
  if (!DT)
    return fail(T, Field, "missing required field 'dtype'");
  std::vector<const toml::node *> Names;
  if (const toml::array *A = DT->as_array()) {
    for (const toml::node &E : *A)
      Names.push_back(&E);
    if (!Input)
      return fail(*DT, Field + ".dtype",
                  "an output has one element type "
                  "(a name, or inK for input K's)");
  } else {
    Names.push_back(DT);
  }
  if (Names.empty())
    return fail(*DT, Field + ".dtype", "names no element type");
  for (const toml::node *E : Names) {
    const auto *S = E->as_string();
    bool IsIn = false;
    std::optional<unsigned> Ref = S ? tensorRef(S->get(), IsIn) : std::nullopt;
    if (!Input && Ref && IsIn) {
      if (*Ref >= C.Inputs.size() || C.Inputs[*Ref].Optional)
        return fail(*E, Field + ".dtype", "'{}' is not a required input",
                    S->get());
      D.DTypeOf = Ref;
      continue;
    }
    std::optional<DType> Ty = S ? dtypeNamed(S->get()) : std::nullopt;
    if (!Ty)
      return fail(*E, Field + ".dtype",
                  "expected an element type (f32, f16, "
                  "bf16, i8, u8, i16, u16, i32, u32, "
                  "i64, u64, bool, f64){}",
                  Input ? "" : " or inK");
    D.DTypes.push_back(*Ty);
  }
  if (Input) {
    if (const toml::node *O = T.get("optional")) {
      if (!O->is_boolean())
        return fail(*O, Field + ".optional", "must be true or false");
      D.Optional = O->as_boolean()->get();
    }
    C.Inputs.push_back(std::move(D));
    return llvm::Error::success();
  }
  auto Shape = string(T, "shape", Field, true);
  if (!Shape)
    return Shape.takeError();
  const toml::node &At = *T.get("shape");
  auto Rule = ShapeRule::parse(*Shape);
  if (!Rule)
    return fail(At, Field + ".shape", "{}", llvm::toString(Rule.takeError()));
  if (Rule->CopyOf && *Rule->CopyOf >= C.Inputs.size())
    return fail(At, Field + ".shape",
                "'{}' copies input {}, but the op "
                "declares {}",
                *Shape, *Rule->CopyOf, C.Inputs.size());
  for (const ShapeExpr &X : Rule->Dims)
    if (auto E = checkRefs(X, C, At, Field + ".shape"))
      return E;
  D.Shape = std::move(*Rule);
  C.Outputs.push_back(std::move(D));
  return llvm::Error::success();
}

llvm::Error Reader::attribute(const toml::table &T, CustomOp &C,
                              unsigned Index) {
  std::string Field = fmt::format("attribute {}", Index);
  if (auto E = onlyKeys(T, Field, {"name", "kind", "default", "required"}))
    return E;
  CustomAttr A;
  auto Name = nameField(T, Field);
  if (!Name)
    return Name.takeError();
  if (C.attr(*Name))
    return fail(*T.get("name"), Field + ".name", "'{}' is declared twice",
                *Name);
  A.Name = *Name;
  Field = fmt::format("attribute '{}'", A.Name);
  auto Kind = string(T, "kind", Field, true);
  if (!Kind)
    return Kind.takeError();
  static const std::pair<const char *, CustomAttrKind> Kinds[] = {
      {"int", CustomAttrKind::Int},
      {"float", CustomAttrKind::Float},
      {"ints", CustomAttrKind::Ints},
      {"string", CustomAttrKind::String}};
  auto It = std::find_if(std::begin(Kinds), std::end(Kinds),
                         [&](const auto &P) { return *Kind == P.first; });
  if (It == std::end(Kinds))
    return fail(*T.get("kind"), Field + ".kind",
                "'{}' is not one of int, float, ints, string",
                printable(*Kind));
  A.Kind = It->second;
  if (const toml::node *R = T.get("required")) {
    if (!R->is_boolean())
      return fail(*R, Field + ".required", "must be true or false");
    A.Required = R->as_boolean()->get();
  }
  const toml::node *D = T.get("default");
  if (A.Required == (D != nullptr))
    return fail(D ? *D : T, Field, "{}",
                A.Required ? "a required attribute has no default"
                           : "needs a default, or required = true");
  if (D) {
    bool Ok = true;
    switch (A.Kind) {
    case CustomAttrKind::Int:
      Ok = D->is_integer();
      if (Ok)
        A.Default = D->as_integer()->get();
      break;
    case CustomAttrKind::Float:
      // An integer default of a float attribute (scale = 1) is meant.
      Ok = D->is_number();
      if (Ok)
        A.Default = static_cast<float>(D->value<double>().value_or(0));
      break;
    case CustomAttrKind::Ints: {
      std::vector<int64_t> Vs;
      const toml::array *Arr = D->as_array();
      Ok = Arr != nullptr;
      for (size_t I = 0; Ok && I < Arr->size(); ++I) {
        Ok = (*Arr)[I].is_integer();
        if (Ok)
          Vs.push_back((*Arr)[I].as_integer()->get());
      }
      A.Default = std::move(Vs);
      break;
    }
    case CustomAttrKind::String:
      Ok = D->is_string();
      if (Ok)
        A.Default = D->as_string()->get();
      break;
    }
    if (!Ok)
      return fail(*D, Field + ".default", "must be of kind {}", *Kind);
  }
  C.Attrs.push_back(std::move(A));
  return llvm::Error::success();
}

llvm::Error Reader::param(const toml::node &N, CustomOp &C, unsigned Index) {
  std::string Field = fmt::format("params[{}]", Index);
  const auto *S = N.as_string();
  if (!S)
    return fail(N, Field,
                "must be a string (inK, outK, attr.NAME or an "
                "integer expression)");
  CustomParam P;
  P.Text = S->get();
  // "NAME = EXPR" names the parameter in the prototype.
  if (size_t Eq = P.Text.find('='); Eq != std::string::npos) {
    std::string Name = P.Text.substr(0, Eq);
    Name.erase(Name.find_last_not_of(" \t") + 1);
    Name.erase(0, Name.find_first_not_of(" \t"));
    if (!isWord(Name))
      return fail(N, Field,
                  "'{}': the name before '=' is not a C "
                  "identifier",
                  P.Text);
    P.Name = Name;
    P.Text = P.Text.substr(Eq + 1);
    P.Text.erase(0, P.Text.find_first_not_of(" \t"));
    P.Text.erase(P.Text.find_last_not_of(" \t") + 1);
  }
  bool In = false;
  if (std::optional<unsigned> K = tensorRef(P.Text, In)) {
    size_t Count = In ? C.Inputs.size() : C.Outputs.size();
    if (*K >= Count)
      return fail(N, Field, "'{}': the op declares {} {}", P.Text, Count,
                  In ? "inputs" : "outputs");
    P.K = In ? CustomParam::Kind::Input : CustomParam::Kind::Output;
    P.Index = *K;
    C.Params.push_back(std::move(P));
    return llvm::Error::success();
  }
  if (P.Text.rfind("attr.", 0) == 0)
    if (const CustomAttr *A = C.attr(P.Text.substr(5))) {
      P.Attr = A->Name;
      if (A->Kind == CustomAttrKind::String)
        return fail(N, Field,
                    "string attribute '{}' cannot be a kernel "
                    "parameter",
                    A->Name);
      if (A->Kind != CustomAttrKind::Int) {
        P.K = A->Kind == CustomAttrKind::Float ? CustomParam::Kind::FloatAttr
                                               : CustomParam::Kind::IntsAttr;
        C.Params.push_back(std::move(P));
        return llvm::Error::success();
      }
    }
  auto X = ShapeExpr::parse(P.Text);
  if (!X)
    return fail(N, Field, "{}", llvm::toString(X.takeError()));
  if (auto E = checkRefs(*X, C, N, Field))
    return E;
  P.K = CustomParam::Kind::Int;
  P.Expr = std::move(*X);
  C.Params.push_back(std::move(P));
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<CustomOp>> Reader::op(const toml::table &T) {
  OpName.clear();
  auto C = std::make_unique<CustomOp>();
  C->File = Path;
  C->Line = T.source().begin.line;
  auto Name = string(T, "name", "", true);
  if (!Name)
    return Name.takeError();
  if (Name->empty())
    return fail(*T.get("name"), "name", "must not be empty");
  OpName = C->Name = *Name;
  // Passes still recognise some ops by op type alone (Relu after a Conv is
  // fused): a declared op must not pass for one of cuvil's.
  if (lookupOp(C->Name))
    return fail(*T.get("name"), "name",
                "'{}' is the name of an ONNX operator cuvil compiles, which "
                "cuvil's passes would take the node for; name it otherwise",
                C->Name);
  if (auto E = onlyKeys(T, "",
                        {"name", "domain", "kernel", "inputs", "outputs",
                         "attributes", "params", "macs", "in_place", "doc"}))
    return E;
  auto Domain = string(T, "domain", "", true);
  if (!Domain)
    return Domain.takeError();
  C->Domain = *Domain;
  if (C->Domain.empty() || C->Domain == "ai.onnx" ||
      C->Domain.rfind("ai.onnx.", 0) == 0 || C->Domain == "cuvil")
    return fail(*T.get("domain"), "domain",
                "'{}' is reserved (ONNX's domains, cuvil's); declare ops of "
                "your own domain, such as com.vendor",
                C->Domain);
  auto Kernel = string(T, "kernel", "", true);
  if (!Kernel)
    return Kernel.takeError();
  const toml::node &KAt = *T.get("kernel");
  if (Kernel->rfind("cuvil_", 0) == 0 || Kernel->rfind("CUVIL_", 0) == 0)
    return fail(KAt, "kernel",
                "'{}' clashes with cuvil's own symbols "
                "(cuvil_*); name it after your firmware",
                *Kernel);
  if (!isSafeCIdentifier(*Kernel))
    return fail(KAt, "kernel",
                "'{}' is not a C identifier the firmware can "
                "define (letters, digits and '_', not a "
                "keyword or a reserved name)",
                printable(*Kernel));
  C->Kernel = *Kernel;
  if (auto Doc = string(T, "doc", "", false); !Doc)
    return Doc.takeError();
  // Attributes first: the shape rules and parameters read them.
  auto Attrs = tables(T, "attributes");
  if (!Attrs)
    return Attrs.takeError();
  if (*Attrs)
    for (const toml::node &E : **Attrs)
      if (auto Err = attribute(*E.as_table(), *C, C->Attrs.size()))
        return Err;
  for (bool Input : {true, false}) {
    auto List = tables(T, Input ? "inputs" : "outputs");
    if (!List)
      return List.takeError();
    if (*List)
      for (const toml::node &E : **List)
        if (auto Err = tensor(*E.as_table(), *C, Input,
                              Input ? C->Inputs.size() : C->Outputs.size()))
          return Err;
  }
  if (C->Outputs.empty())
    return fail(T, "outputs", "the op declares no output");
  const toml::node *Params = T.get("params");
  if (!Params)
    return fail(T, "",
                "missing required field 'params' (the kernel's "
                "arguments, e.g. [\"in0\", \"out0\", \"numel(in0)\"])");
  const toml::array *PA = Params->as_array();
  if (!PA)
    return fail(*Params, "params", "must be an array of strings");
  for (const toml::node &E : *PA)
    if (auto Err = param(E, *C, C->Params.size()))
      return Err;
  for (unsigned O = 0; O < C->Outputs.size(); ++O)
    if (std::none_of(C->Params.begin(), C->Params.end(),
                     [&](const CustomParam &P) {
                       return P.K == CustomParam::Kind::Output && P.Index == O;
                     }))
      return fail(*Params, "params",
                  "output {} ('out{}') is not passed to "
                  "the kernel, which must write it",
                  O, O);
  if (const toml::node *M = T.get("macs")) {
    const auto *S = M->as_string();
    if (!S)
      return fail(*M, "macs", "must be a string (an integer expression)");
    auto X = ShapeExpr::parse(S->get());
    if (!X)
      return fail(*M, "macs", "{}", llvm::toString(X.takeError()));
    if (auto E = checkRefs(*X, *C, *M, "macs"))
      return E;
    C->Macs = std::move(*X);
  }
  if (const toml::node *IP = T.get("in_place")) {
    if (!IP->is_boolean())
      return fail(*IP, "in_place", "must be true or false");
    C->InPlace = IP->as_boolean()->get();
    if (C->InPlace && (C->Inputs.empty() || C->Inputs[0].Optional))
      return fail(*IP, "in_place",
                  "output 0 can only be computed in the "
                  "place of a required input 0");
  }
  return C;
}

llvm::Expected<std::unique_ptr<CustomOpSet>>
Reader::read(const toml::table &Root) {
  if (auto E = onlyKeys(Root, "", {"op"}))
    return E;
  auto Set = std::make_unique<CustomOpSet>();
  const toml::node *Ops = Root.get("op");
  if (!Ops)
    return makeError("{}: declares no op (expected [[op]] tables)", Path);
  const toml::array *A = Ops->as_array();
  if (!A)
    return fail(*Ops, "op", "must be an array of tables ([[op]])");
  std::map<std::string, const CustomOp *> Kernels;
  for (const toml::node &E : *A) {
    const toml::table *T = E.as_table();
    if (!T)
      return fail(E, "op", "every entry must be a table ([[op]])");
    auto C = op(*T);
    if (!C)
      return C.takeError();
    if (const OpDef *Twice = Set->registry().lookup((*C)->Domain, (*C)->Name))
      return fail(*T, "", "declared twice (first at line {})",
                  customOpOf(Twice)->Line);
    auto [It, New] = Kernels.emplace((*C)->Kernel, C->get());
    if (!New)
      return fail(*T->get("kernel"), "kernel",
                  "'{}' is already the kernel of op '{}' (line {})",
                  (*C)->Kernel, It->second->Name, It->second->Line);
    Set->add(std::move(*C));
  }
  return Set;
}

} // namespace

llvm::Expected<std::unique_ptr<CustomOpSet>>
parseCustomOps(std::string_view Text, const std::string &Path) {
  toml::parse_result R = toml::parse(Text, Path);
  if (!R)
    return makeError("{}:{}: {}", Path, R.error().source().begin.line,
                     R.error().description());
  Reader Rd(Path);
  return Rd.read(R.table());
}

llvm::Expected<std::unique_ptr<CustomOpSet>>
loadCustomOps(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return makeError("{}: cannot read the file", Path);
  std::stringstream SS;
  SS << In.rdbuf();
  return parseCustomOps(SS.str(), Path);
}

} // namespace cuvil
