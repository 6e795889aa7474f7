//===- IRSyntax.h - Lexical rules shared by the IR printer and parser
//-*-C++-*-//
//
// Names (of the graph, values, attributes and origins) stand bare when they
// are made of [A-Za-z0-9_.:/-], are not empty and do not end in ':' (the
// colon before a type); otherwise they are quoted strings. These rules are
// the contract between ir/IRPrinter.cpp and ir/IRParser.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_IR_IRSYNTAX_H
#define CUVIL_IR_IRSYNTAX_H

#include <cstdint>
#include <string>
#include <string_view>

namespace cuvil {

struct Origin;
class Value;

/// Whether C may appear in a bare (unquoted) name.
inline bool isBareNameChar(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
         (C >= '0' && C <= '9') || C == '_' || C == '.' || C == ':' ||
         C == '/' || C == '-';
}

/// Whether C may appear in a bare operator name (domain.OpType).
inline bool isOpNameChar(char C) {
  return isBareNameChar(C) && C != ':' && C != '/' && C != '-';
}

/// The attribute holding the domain of a node outside the standard one; it
/// prints as the prefix of the operator ("com.microsoft.Foo").
constexpr std::string_view DomainAttr = "cuvil.domain";

/// cuvil's internal ops (domain "cuvil", see ops/InternalOps.def) keep the
/// prefix in their op type ("cuvil.FusedConv") and have no DomainAttr.
constexpr std::string_view InternalPrefix = "cuvil.";

/// Constants of at most this many elements print their values inline.
constexpr int64_t InlineElements = 16;

/// A value's type: "f32[1x3x8x8]" (? an unknown dimension, * an unknown
/// rank, f32[] a scalar).
std::string typeText(const Value *V);

/// The name a node gets when its line has no name=: its first origin's, or
/// without origin Fallback (its first output's name, or its operator).
std::string defaultNodeName(const Origin &O, const std::string &Fallback);

} // namespace cuvil

#endif
