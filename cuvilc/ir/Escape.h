//===- Escape.h - Names as data in every output language ------*- C++ -*-===//
//
// Tensor, node, file and region names come from the user's files: any bytes,
// any length. They reach generated C, linker scripts, SVG, JSON and the
// terminal only through these functions, one per output language, so a name
// is always data and never code ("*/", '"', '\', newlines, non-UTF-8 bytes,
// 10 KB names, names that are C keywords or our own symbols). JSON has no
// function here: nlohmann's serializer escapes, and emit/Report.cpp dumps
// with error_handler_t::replace so bytes that are not UTF-8 cannot abort.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_IR_ESCAPE_H
#define CUVIL_IR_ESCAPE_H

#include <string>
#include <string_view>

namespace cuvil {

/// Text for a terminal or a log line: control bytes (newline included), DEL,
/// and every non-ASCII byte of text that is not valid UTF-8 become \xNN; a
/// backslash stays as it is. Valid UTF-8 passes unchanged.
std::string printable(std::string_view S);

/// A C string literal, quotes included, whose value is exactly the bytes of
/// S: '"', '\\', '?' (trigraphs) and every byte outside printable ASCII are
/// escaped (octal, so a following digit cannot extend the escape).
std::string cStringLiteral(std::string_view S);

/// Text for the inside of a C (or linker-script) block comment: printable()
/// and then "*/" and "/*" are broken up, so the comment cannot end early or
/// nest. Longer than MaxChars bytes: cut, with "..." appended.
std::string cComment(std::string_view S, size_t MaxChars = 200);

/// A C identifier made from S: each byte that is not [A-Za-z0-9_] becomes
/// '_', and a leading digit (or an empty name) gets a '_' in front.
std::string cIdentifier(std::string_view S);

/// Whether Id may be used as a parameter or local name in generated C and
/// C++ without meaning something else: not a C/C++ keyword, not reserved
/// to the implementation (__x, _X), not a standard macro or typedef our
/// headers use (NULL, uint8_t...), not in cuvil's own namespace (cuvil_*,
/// CUVIL_*), and at most 63 characters (C's guaranteed significance).
bool isSafeCIdentifier(std::string_view Id);

/// XML character data / attribute text of text that is printable already
/// (newlines allowed): &, <, >, " and ' become entities.
std::string xmlEscape(std::string_view S);
/// Any name as XML text: xmlEscape(printable(S)).
std::string xmlText(std::string_view S);

/// Whether S may stand unquoted in a GNU ld / lld linker script as a memory
/// region or section name part: [A-Za-z_][A-Za-z0-9_]*.
bool isLinkerScriptName(std::string_view S);

} // namespace cuvil

#endif
