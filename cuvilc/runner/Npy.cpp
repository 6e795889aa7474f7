//===- Npy.cpp - Tensors as numpy .npy files ------------------------------===//
#include "runner/Npy.h"

#include "ir/Diagnostic.h"

#include <cstring>
#include <fmt/ranges.h>
#include <fstream>
#include <llvm/ADT/APFloat.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

namespace cuvil {

namespace {

template <typename T> T load(const uint8_t *Data, size_t I) {
  T V;
  std::memcpy(&V, Data + I * sizeof(T), sizeof(T));
  return V;
}

template <typename T> void store(uint8_t *Data, size_t I, T V) {
  std::memcpy(Data + I * sizeof(T), &V, sizeof(T));
}

/// A 16-bit float (IEEE half or bfloat16) to double.
double halfValue(const llvm::fltSemantics &Sem, uint16_t Bits) {
  llvm::APFloat F(Sem, llvm::APInt(16, Bits));
  bool LosesInfo = false;
  F.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &LosesInfo);
  return F.convertToDouble();
}

/// A double rounded to a 16-bit float's bits.
uint16_t halfBits(const llvm::fltSemantics &Sem, double V) {
  llvm::APFloat F(V);
  bool LosesInfo = false;
  F.convert(Sem, llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
  return static_cast<uint16_t>(F.bitcastToAPInt().getZExtValue());
}

} // namespace

llvm::Expected<std::string> npyDescr(DType T) {
  switch (T) {
  case DType::F32: return std::string("<f4");
  case DType::F16: return std::string("<f2");
  case DType::F64: return std::string("<f8");
  case DType::I8: return std::string("|i1");
  case DType::U8: return std::string("|u1");
  case DType::I16: return std::string("<i2");
  case DType::U16: return std::string("<u2");
  case DType::I32: return std::string("<i4");
  case DType::U32: return std::string("<u4");
  case DType::I64: return std::string("<i8");
  case DType::U64: return std::string("<u8");
  case DType::Bool: return std::string("|b1");
  case DType::BF16: break;
  }
  return makeError("numpy has no {} type", dtypeName(T));
}

llvm::Expected<std::string> npyBytes(DType T, const std::vector<int64_t> &Shape,
                                     llvm::StringRef Data) {
  uint64_t Count = 1;
  for (int64_t D : Shape) {
    if (D < 0)
      return makeError("negative dimension {} in the shape", D);
    Count *= static_cast<uint64_t>(D);
  }
  if (Data.size() != Count * dtypeSize(T))
    return makeError("{} bytes of data for {} elements of {}", Data.size(),
                     Count, dtypeName(T));
  std::string Widened;
  if (T == DType::BF16) {
    Widened.resize(Count * 4);
    auto *Out = reinterpret_cast<uint8_t *>(Widened.data());
    for (size_t I = 0; I < Count; ++I)
      store<uint32_t>(Out, I,
                      uint32_t(load<uint16_t>(Data.bytes_begin(), I)) << 16);
    Data = Widened;
    T = DType::F32;
  }
  auto Descr = npyDescr(T);
  if (!Descr)
    return Descr.takeError();
  // A 1-tuple needs its trailing comma: (5,).
  std::string ShapeText = fmt::format("({}{})", fmt::join(Shape, ", "),
                                      Shape.size() == 1 ? "," : "");
  std::string Header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                  *Descr, ShapeText);
  // Magic, version, header length, header padded with spaces and ended by
  // a newline so that the data starts on a 64-byte boundary (numpy's own
  // alignment). Version 1.0 has a 2-byte length field.
  size_t Prefix = Header.size() + 1 + 10 > 65535 ? 12 : 10;
  size_t Total = (Prefix + Header.size() + 1 + 63) / 64 * 64;
  Header.append(Total - Prefix - Header.size() - 1, ' ');
  Header += '\n';
  std::string Out("\x93NUMPY", 6);
  Out += static_cast<char>(Prefix == 10 ? 1 : 2);
  Out += '\0';
  uint32_t Len = static_cast<uint32_t>(Header.size());
  for (size_t B = 0; B < Prefix - 8; ++B)
    Out += static_cast<char>((Len >> (8 * B)) & 0xff);
  Out += Header;
  Out.append(Data.data(), Data.size());
  return Out;
}

llvm::Error writeNpyFile(const std::string &Path, DType T,
                         const std::vector<int64_t> &Shape,
                         llvm::StringRef Data) {
  auto Bytes = npyBytes(T, Shape, Data);
  if (!Bytes)
    return makeError("'{}': {}", Path, llvm::toString(Bytes.takeError()));
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC, llvm::sys::fs::OF_None);
  if (EC)
    return makeError("'{}': cannot write: {}", Path, EC.message());
  OS << *Bytes;
  OS.close();
  if (OS.has_error())
    return makeError("'{}': cannot write: {}", Path, OS.error().message());
  return llvm::Error::success();
}

double elementValue(DType T, const uint8_t *Data, size_t I) {
  switch (T) {
  case DType::F32: return load<float>(Data, I);
  case DType::F64: return load<double>(Data, I);
  case DType::F16:
    return halfValue(llvm::APFloat::IEEEhalf(), load<uint16_t>(Data, I));
  case DType::BF16:
    return halfValue(llvm::APFloat::BFloat(), load<uint16_t>(Data, I));
  case DType::I8: return load<int8_t>(Data, I);
  case DType::U8: return load<uint8_t>(Data, I);
  case DType::I16: return load<int16_t>(Data, I);
  case DType::U16: return load<uint16_t>(Data, I);
  case DType::I32: return load<int32_t>(Data, I);
  case DType::U32: return load<uint32_t>(Data, I);
  case DType::I64: return static_cast<double>(load<int64_t>(Data, I));
  case DType::U64: return static_cast<double>(load<uint64_t>(Data, I));
  case DType::Bool: return load<uint8_t>(Data, I) ? 1 : 0;
  }
  return 0;
}

void setElementValue(DType T, uint8_t *Data, size_t I, double V) {
  switch (T) {
  case DType::F32: return store<float>(Data, I, static_cast<float>(V));
  case DType::F64: return store<double>(Data, I, V);
  case DType::F16:
    return store(Data, I, halfBits(llvm::APFloat::IEEEhalf(), V));
  case DType::BF16: return store(Data, I, halfBits(llvm::APFloat::BFloat(), V));
  case DType::I8: return store(Data, I, static_cast<int8_t>(V));
  case DType::U8: return store(Data, I, static_cast<uint8_t>(V));
  case DType::I16: return store(Data, I, static_cast<int16_t>(V));
  case DType::U16: return store(Data, I, static_cast<uint16_t>(V));
  case DType::I32: return store(Data, I, static_cast<int32_t>(V));
  case DType::U32: return store(Data, I, static_cast<uint32_t>(V));
  case DType::I64: return store(Data, I, static_cast<int64_t>(V));
  case DType::U64: return store(Data, I, static_cast<uint64_t>(V));
  case DType::Bool: return store<uint8_t>(Data, I, V != 0);
  }
}

} // namespace cuvil
