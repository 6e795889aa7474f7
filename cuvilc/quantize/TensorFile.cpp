//===- TensorFile.cpp - One tensor from a .npy or ONNX .pb file -----------===//
#include "quantize/TensorFile.h"

#include "frontend/onnx/TensorProto.h"
#include "ir/CheckedMath.h"
#include "ir/Diagnostic.h"

#include <cctype>
#include <cstring>
#include <fmt/ranges.h>
#include <limits>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <map>
#include <optional>

namespace cuvil::quant {

namespace {

/// The element type of a numpy descr such as '<f4' or '|u1'.
llvm::Expected<DType> npyType(const std::string &Descr) {
  if (Descr.size() < 3)
    return makeError("unsupported dtype '{}'", Descr);
  char Order = Descr[0];
  if (Order == '>')
    return makeError("dtype '{}' is big-endian; save the array as "
                     "little-endian (arr.astype('<{}'))",
                     Descr, Descr.substr(1));
  static const std::map<std::string, DType> Types = {
      {"f2", DType::F16}, {"f4", DType::F32}, {"f8", DType::F64},
      {"i1", DType::I8},  {"i2", DType::I16}, {"i4", DType::I32},
      {"i8", DType::I64}, {"u1", DType::U8},  {"u2", DType::U16},
      {"u4", DType::U32}, {"u8", DType::U64}, {"b1", DType::Bool}};
  auto It = Types.find(Descr.substr(1));
  if ((Order != '<' && Order != '|' && Order != '=') || It == Types.end())
    return makeError("unsupported dtype '{}' (supported: float16/32/64, "
                     "signed and unsigned integers of 1 to 8 bytes, bool)",
                     Descr);
  return It->second;
}

/// The header of a .npy file: a Python dict literal such as
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
class NpyHeader {
public:
  explicit NpyHeader(llvm::StringRef Text) : Text(Text) {}

  std::string Descr;
  std::optional<bool> Fortran;
  std::optional<std::vector<int64_t>> Shape;

  llvm::Error parse() {
    if (!eat('{'))
      return fail("expected '{'");
    bool HasDescr = false;
    while (!eat('}')) {
      std::string Key;
      if (auto E = string(Key))
        return E;
      if (!eat(':'))
        return fail("expected ':' after '" + Key + "'");
      llvm::Error E = llvm::Error::success();
      if (Key == "descr") {
        if (peek() == '[')
          return makeError("structured dtypes (records) are not supported");
        E = string(Descr);
        HasDescr = true;
      } else if (Key == "fortran_order") {
        E = boolean(Fortran);
      } else if (Key == "shape") {
        E = tuple(Shape);
      } else {
        return fail("unexpected key '" + Key + "'");
      }
      if (E)
        return E;
      if (!eat(',') && peek() != '}')
        return fail("expected ',' or '}'");
    }
    if (!HasDescr || !Fortran || !Shape)
      return fail("'descr', 'fortran_order' or 'shape' is missing");
    return llvm::Error::success();
  }

private:
  llvm::StringRef Text;
  size_t Pos = 0;

  llvm::Error fail(const std::string &What) {
    return makeError("malformed header ({} at offset {})", What, Pos);
  }
  char peek() {
    while (Pos < Text.size() &&
           std::isspace(static_cast<unsigned char>(Text[Pos])))
      ++Pos;
    return Pos < Text.size() ? Text[Pos] : '\0';
  }
  bool eat(char C) {
    if (peek() != C)
      return false;
    ++Pos;
    return true;
  }
  bool word(llvm::StringRef W) {
    peek();
    if (!Text.substr(Pos).starts_with(W))
      return false;
    Pos += W.size();
    return true;
  }
  llvm::Error string(std::string &Out) {
    char Quote = peek();
    if (Quote != '\'' && Quote != '"')
      return fail("expected a string");
    size_t End = Text.find(Quote, Pos + 1);
    if (End == llvm::StringRef::npos)
      return fail("unterminated string");
    Out = Text.slice(Pos + 1, End).str();
    Pos = End + 1;
    return llvm::Error::success();
  }
  llvm::Error boolean(std::optional<bool> &Out) {
    if (word("True"))
      Out = true;
    else if (word("False"))
      Out = false;
    else
      return fail("expected True or False");
    return llvm::Error::success();
  }
  llvm::Error tuple(std::optional<std::vector<int64_t>> &Out) {
    if (!eat('('))
      return fail("expected a tuple");
    Out.emplace();
    while (!eat(')')) {
      peek();
      size_t Start = Pos;
      int64_t D = 0;
      while (Pos < Text.size() &&
             std::isdigit(static_cast<unsigned char>(Text[Pos]))) {
        if (__builtin_mul_overflow(D, 10, &D) ||
            __builtin_add_overflow(D, Text[Pos] - '0', &D))
          return fail("dimension too large");
        ++Pos;
      }
      if (Pos == Start)
        return fail("expected a non-negative dimension");
      eat('L'); // Python 2's long integers
      Out->push_back(D);
      if (!eat(',') && peek() != ')')
        return fail("expected ',' or ')' in the shape");
    }
    return llvm::Error::success();
  }
};

uint32_t littleEndian(llvm::StringRef B, size_t At, unsigned Bytes) {
  uint32_t V = 0;
  for (unsigned I = 0; I < Bytes; ++I)
    V |= static_cast<uint32_t>(static_cast<uint8_t>(B[At + I])) << (8 * I);
  return V;
}

/// The dense size of Shape of Ty, or an error naming what does not fit.
llvm::Expected<int64_t> byteCount(const std::vector<int64_t> &Shape, DType Ty) {
  auto Count = checkedElementCount(Shape);
  auto Bytes = Count ? checkedByteCount(*Count, dtypeSize(Ty)) : std::nullopt;
  if (!Bytes)
    return makeError("shape {} has {} elements, more than fits in memory",
                     shapeText(Shape), countText(wideElementCount(Shape)));
  return *Bytes;
}

} // namespace

std::string shapeText(const std::vector<int64_t> &Shape) {
  std::vector<std::string> Dims;
  for (int64_t D : Shape)
    Dims.push_back(D < 0 ? "?" : std::to_string(D));
  return fmt::format("[{}]", fmt::join(Dims, "x"));
}

llvm::Expected<FileTensor> parseNpy(llvm::StringRef Bytes) {
  static const char Magic[] = "\x93NUMPY";
  if (!Bytes.starts_with(llvm::StringRef(Magic, 6)))
    return makeError("not a .npy file (no \\x93NUMPY magic)");
  if (Bytes.size() < 10)
    return makeError("truncated .npy header");
  unsigned Major = static_cast<uint8_t>(Bytes[6]);
  if (Major < 1 || Major > 3)
    return makeError(".npy format version {}.{} is not supported (1.0, "
                     "2.0 and 3.0 are)",
                     Major, static_cast<uint8_t>(Bytes[7]));
  // Version 1 stores the header's length in 2 bytes, later ones in 4.
  unsigned LenBytes = Major == 1 ? 2 : 4;
  if (Bytes.size() < 8 + LenBytes)
    return makeError("truncated .npy header");
  uint64_t HeaderLen = littleEndian(Bytes, 8, LenBytes);
  uint64_t DataStart = 8 + LenBytes + HeaderLen;
  if (Bytes.size() < DataStart)
    return makeError("truncated .npy header ({} bytes, the header says {})",
                     Bytes.size(), DataStart);
  NpyHeader H(Bytes.slice(8 + LenBytes, DataStart));
  if (auto E = H.parse())
    return E;
  if (*H.Fortran)
    return makeError("the array is in Fortran order; save it in C order "
                     "(np.save(f, np.ascontiguousarray(arr)))");
  FileTensor T;
  auto Ty = npyType(H.Descr);
  if (!Ty)
    return Ty.takeError();
  T.Ty = *Ty;
  T.Shape = std::move(*H.Shape);
  auto Size = byteCount(T.Shape, T.Ty);
  if (!Size)
    return Size.takeError();
  uint64_t Have = Bytes.size() - DataStart;
  if (Have != static_cast<uint64_t>(*Size))
    return makeError("{}: holds {} bytes of data, shape {} of {} needs {}",
                     Have < static_cast<uint64_t>(*Size) ? "truncated"
                                                         : "trailing bytes",
                     Have, shapeText(T.Shape), H.Descr, *Size);
  T.Data.assign(Bytes.bytes_begin() + DataStart, Bytes.bytes_end());
  return T;
}

llvm::Expected<FileTensor> parseTensorProto(llvm::StringRef Bytes) {
  onnx::TensorProto P;
  if (Bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return makeError("larger than protobuf's 2 GiB limit");
  if (!P.ParseFromArray(Bytes.data(), static_cast<int>(Bytes.size())))
    return makeError("not a serialized ONNX TensorProto");
  if (P.data_type() == onnx::TensorProto::UNDEFINED)
    return makeError("the TensorProto has no element type (is the file an "
                     "ONNX TensorProto?)");
  auto Ty = mapType(P.data_type());
  if (!Ty)
    return makeError("unsupported element type {}", typeName(P.data_type()));
  FileTensor T;
  T.Ty = *Ty;
  T.Shape.assign(P.dims().begin(), P.dims().end());
  for (int64_t D : T.Shape)
    if (D < 0)
      return makeError("negative dimension in shape {}", shapeText(T.Shape));
  auto Size = byteCount(T.Shape, T.Ty);
  if (!Size)
    return Size.takeError();
  auto Data = tensorBytes(P, T.Ty, *Size / dtypeSize(T.Ty));
  if (!Data)
    return Data.takeError();
  T.Data = std::move(*Data);
  return T;
}

bool isTensorFile(llvm::StringRef Path) {
  llvm::StringRef Ext = llvm::sys::path::extension(Path);
  return Ext == ".npy" || Ext == ".pb";
}

llvm::Expected<FileTensor> readTensorFile(const std::string &Path) {
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!Buf)
    return makeError("'{}': cannot read: {}", Path, Buf.getError().message());
  llvm::StringRef Bytes = (*Buf)->getBuffer();
  auto T = llvm::sys::path::extension(Path) == ".npy" ? parseNpy(Bytes)
                                                      : parseTensorProto(Bytes);
  if (!T)
    return makeError("'{}': {}", Path, llvm::toString(T.takeError()));
  return T;
}

} // namespace cuvil::quant
