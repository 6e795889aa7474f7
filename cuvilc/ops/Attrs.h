//===- Attrs.h - Typed operator attributes, declared once -------*- C++ -*-===//
//
// An op declares the attributes it reads once, as an X-macro list in its
// own file:
//
//   #define CONCAT_ATTRS(X) X(Axis, "axis", Int, 0)
//   CUVIL_OP_ATTRS(ConcatAttrs, CONCAT_ATTRS)
//
// Each entry is X(Field, "onnx_name", Kind, Default), Kind one of AttrKind.
// The macro generates a struct ConcatAttrs with one typed field per entry
// (initialised to Default), a constructor that reads them from a Node, and
// ConcatAttrs::Specs, the {name, kind} table the op's OpDef points to
// (OpDef::Attrs). The importer checks every attribute a model gives to the
// op against that table (verifyAttrKinds): an attribute of another kind is
// refused, naming the node, op, attribute and both kinds, instead of being
// silently read as its default. Names the table does not list are left
// alone: ONNX's checker already refuses unknown attributes of standard ops,
// and cuvil's own attributes (cuvil.*) and the importer's expansions of
// tensor attributes (NAME.dtype, ...) are not the model's.
//
// A Default with a top-level comma must be parenthesised or braced in a
// way the preprocessor keeps whole (e.g. `(std::vector<int64_t>{1, 1})`).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_ATTRS_H
#define CUVIL_OPS_ATTRS_H

#include "ir/Graph.h"

#include <llvm/Support/Error.h>
#include <string>
#include <vector>

namespace cuvil {

/// The kinds of ONNX attributes ops read (AttributeProto's INT, FLOAT, ...).
enum class AttrKind : uint8_t { Int, Float, String, Ints, Floats, Strings };

/// One declared attribute; a table of them ends with a null Name.
struct AttrSpec {
  const char *Name;
  AttrKind Kind;
};

/// "int", "float", "string", "ints", "floats" or "strings".
const char *attrKindName(AttrKind K);
/// The kind of an attribute value as the importer stored it.
AttrKind attrKindOf(const AttrValue &V);

/// Refuses an attribute of N whose kind differs from the one N's op
/// declares (OpDef::Attrs). Success when the op declares none.
llvm::Error verifyAttrKinds(const Node &N);

namespace attr_detail {
template <AttrKind K> struct Reader;
template <> struct Reader<AttrKind::Int> {
  using Type = int64_t;
  static Type read(const Node &N, const char *Name, Type D) {
    return N.getInt(Name, D);
  }
};
template <> struct Reader<AttrKind::Float> {
  using Type = float;
  static Type read(const Node &N, const char *Name, Type D) {
    return N.getFloat(Name, D);
  }
};
template <> struct Reader<AttrKind::String> {
  using Type = std::string;
  static Type read(const Node &N, const char *Name, const Type &D) {
    return N.getString(Name, D);
  }
};
template <> struct Reader<AttrKind::Ints> {
  using Type = std::vector<int64_t>;
  static Type read(const Node &N, const char *Name, Type D) {
    return N.getInts(Name, std::move(D));
  }
};
template <> struct Reader<AttrKind::Floats> {
  using Type = std::vector<float>;
  static Type read(const Node &N, const char *Name, const Type &D);
};
template <> struct Reader<AttrKind::Strings> {
  using Type = std::vector<std::string>;
  static Type read(const Node &N, const char *Name, Type D) {
    return N.getStrings(Name, std::move(D));
  }
};
} // namespace attr_detail

#define CUVIL_ATTR_FIELD(Field, Name, Kind, Default)                           \
  attr_detail::Reader<AttrKind::Kind>::Type Field = Default;
#define CUVIL_ATTR_READ(Field, Name, Kind, Default)                            \
  Field = attr_detail::Reader<AttrKind::Kind>::read(N, Name, Default);
#define CUVIL_ATTR_SPEC(Field, Name, Kind, Default) {Name, AttrKind::Kind},

/// Declares struct Struct from the X-macro List (see the file comment).
#define CUVIL_OP_ATTRS(Struct, List)                                           \
  struct Struct {                                                              \
    List(CUVIL_ATTR_FIELD) Struct() = default;                                 \
    explicit Struct(const Node &N) { List(CUVIL_ATTR_READ) }                   \
    static constexpr AttrSpec Specs[] = {                                      \
        List(CUVIL_ATTR_SPEC){nullptr, AttrKind::Int}};                        \
  };

} // namespace cuvil

#endif
