//===- CalibrationData.cpp - The calibration set of cuvilc quantize -------===//
#include "quantize/CalibrationData.h"

#include "ir/Diagnostic.h"
#include "quantize/TensorFile.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <llvm/ADT/APFloat.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace cuvil::quant {

namespace {

bool isFloat(DType T) {
  return T == DType::F16 || T == DType::BF16 || T == DType::F32 ||
         T == DType::F64;
}

bool isInteger(DType T) { return !isFloat(T) && T != DType::Bool; }

const llvm::fltSemantics &semantics(DType T) {
  switch (T) {
  case DType::F16: return llvm::APFloat::IEEEhalf();
  case DType::BF16: return llvm::APFloat::BFloat();
  case DType::F32: return llvm::APFloat::IEEEsingle();
  default: return llvm::APFloat::IEEEdouble();
  }
}

/// Converts float elements between the float types, rounding to nearest
/// even where the target is narrower. float32 <-> float64 (the common case:
/// numpy's default is float64) take the direct path.
std::vector<uint8_t> convertFloats(const FileTensor &T, DType To,
                                   size_t Count) {
  std::vector<uint8_t> Out(Count * dtypeSize(To));
  const uint8_t *In = T.Data.data();
  for (size_t I = 0; I < Count; ++I) {
    if (T.Ty == DType::F64 && To == DType::F32) {
      double D;
      std::memcpy(&D, In + I * 8, 8);
      float F = static_cast<float>(D);
      std::memcpy(&Out[I * 4], &F, 4);
    } else if (T.Ty == DType::F32 && To == DType::F64) {
      float F;
      std::memcpy(&F, In + I * 4, 4);
      double D = F;
      std::memcpy(&Out[I * 8], &D, 8);
    } else {
      unsigned FromBits = dtypeSize(T.Ty) * 8, ToBits = dtypeSize(To) * 8;
      uint64_t Raw = 0;
      std::memcpy(&Raw, In + I * dtypeSize(T.Ty), dtypeSize(T.Ty));
      llvm::APFloat V(semantics(T.Ty), llvm::APInt(FromBits, Raw));
      bool LosesInfo;
      V.convert(semantics(To), llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
      uint64_t Bits = V.bitcastToAPInt().getZExtValue();
      std::memcpy(&Out[I * (ToBits / 8)], &Bits, ToBits / 8);
    }
  }
  return Out;
}

/// The range of an integer type, as int64 (UINT64's top is clipped, which
/// only matters for values no other type holds either).
std::pair<int64_t, int64_t> intRange(DType T) {
  switch (T) {
  case DType::I8: return {INT8_MIN, INT8_MAX};
  case DType::U8: return {0, UINT8_MAX};
  case DType::I16: return {INT16_MIN, INT16_MAX};
  case DType::U16: return {0, UINT16_MAX};
  case DType::I32: return {INT32_MIN, INT32_MAX};
  case DType::U32: return {0, UINT32_MAX};
  case DType::U64: return {0, INT64_MAX};
  default: return {INT64_MIN, INT64_MAX};
  }
}

/// Converts integer elements to another integer type; an error names the
/// first value that does not fit.
llvm::Expected<std::vector<uint8_t>> convertIntegers(const FileTensor &T,
                                                     DType To, size_t Count) {
  unsigned FromSize = dtypeSize(T.Ty), ToSize = dtypeSize(To);
  bool Signed = intRange(T.Ty).first < 0;
  auto [Lo, Hi] = intRange(To);
  std::vector<uint8_t> Out(Count * ToSize);
  for (size_t I = 0; I < Count; ++I) {
    uint64_t Raw = 0;
    std::memcpy(&Raw, &T.Data[I * FromSize], FromSize); // little-endian
    unsigned Shift = 64 - 8 * FromSize;
    int64_t V = Signed ? static_cast<int64_t>(Raw << Shift) >> Shift
                       : static_cast<int64_t>(Raw);
    bool Huge = !Signed && Raw > static_cast<uint64_t>(INT64_MAX);
    if (Huge || V < Lo || V > Hi)
      return makeError("element {} is {}, which {} does not hold", I,
                       Huge ? std::to_string(Raw) : std::to_string(V),
                       dtypeName(To));
    std::memcpy(&Out[I * ToSize], &V, ToSize); // little-endian host
  }
  return Out;
}

/// numpy's name of a type, for the hint of a refused conversion.
std::string_view numpyName(DType T) {
  switch (T) {
  case DType::F16: return "float16";
  case DType::F32: return "float32";
  case DType::F64: return "float64";
  case DType::I8: return "int8";
  case DType::U8: return "uint8";
  case DType::I16: return "int16";
  case DType::U16: return "uint16";
  case DType::I32: return "int32";
  case DType::U32: return "uint32";
  case DType::I64: return "int64";
  case DType::U64: return "uint64";
  case DType::Bool: return "bool_";
  default: return dtypeName(T);
  }
}

/// T's data in the type of In, or an error saying why it cannot be.
llvm::Expected<std::vector<uint8_t>> convert(FileTensor &T,
                                             const ModelInput &In) {
  size_t Count = T.Data.size() / dtypeSize(T.Ty);
  if (T.Ty == In.Ty)
    return std::move(T.Data);
  if (isFloat(T.Ty) && isFloat(In.Ty))
    return convertFloats(T, In.Ty, Count);
  if (isInteger(T.Ty) && isInteger(In.Ty))
    return convertIntegers(T, In.Ty, Count);
  return makeError("holds {} values but input '{}' is {}; convert the data "
                   "as the model expects it (e.g. arr.astype(np.{}))",
                   dtypeName(T.Ty), In.Name, dtypeName(In.Ty),
                   numpyName(In.Ty));
}

bool dimsMatch(llvm::ArrayRef<int64_t> File, llvm::ArrayRef<int64_t> Model) {
  if (File.size() != Model.size())
    return false;
  for (size_t I = 0; I < File.size(); ++I)
    if (Model[I] >= 0 && File[I] != Model[I])
      return false;
  return true;
}

/// How many samples of In the file's shape holds: 1 when it is In's shape,
/// k for a batch (first dimension k times In's, or [k, In's shape...]);
/// 0 when it fits neither.
int64_t samplesIn(const std::vector<int64_t> &File, const ModelInput &In) {
  llvm::ArrayRef<int64_t> F(File), M(In.Shape);
  if (dimsMatch(F, M))
    return 1;
  if (F.size() == M.size() + 1 && dimsMatch(F.drop_front(), M))
    return F[0];
  if (!M.empty() && F.size() == M.size() && M[0] > 0 && F[0] % M[0] == 0 &&
      dimsMatch(F.drop_front(), M.drop_front()))
    return F[0] / M[0];
  return 0;
}

/// The samples of input In that the file at Path holds.
llvm::Expected<std::vector<std::vector<uint8_t>>>
readInputFile(const std::string &Path, const ModelInput &In) {
  auto T = readTensorFile(Path);
  if (!T)
    return T.takeError();
  int64_t K = samplesIn(T->Shape, In);
  if (K == 0)
    return makeError("'{}': shape {} does not match input '{}' of shape {} "
                     "(nor is it a batch of such samples)",
                     Path, shapeText(T->Shape), In.Name, shapeText(In.Shape));
  if (T->Data.empty())
    return makeError("'{}': shape {} holds no data", Path, shapeText(T->Shape));
  auto Data = convert(*T, In);
  if (!Data)
    return makeError("'{}': {}", Path, llvm::toString(Data.takeError()));
  size_t Each = Data->size() / static_cast<size_t>(K);
  std::vector<std::vector<uint8_t>> Out;
  for (int64_t S = 0; S < K; ++S)
    Out.emplace_back(Data->begin() + S * Each, Data->begin() + (S + 1) * Each);
  return Out;
}

struct Entry {
  std::string Name, Path;
  bool IsDir;
};

/// The entries of Dir but hidden ones, sorted by name.
llvm::Expected<std::vector<Entry>> listDir(const std::string &Dir) {
  std::vector<Entry> Out;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    std::string Name = llvm::sys::path::filename(It->path()).str();
    if (Name.starts_with("."))
      continue;
    auto St = It->status();
    if (!St)
      return makeError("'{}': cannot read: {}", It->path(),
                       St.getError().message());
    Out.push_back({Name, It->path(),
                   St->type() == llvm::sys::fs::file_type::directory_file});
  }
  if (EC)
    return makeError("cannot read calibration directory '{}': {}", Dir,
                     EC.message());
  std::sort(Out.begin(), Out.end(),
            [](const Entry &A, const Entry &B) { return A.Name < B.Name; });
  return Out;
}

std::string inputNames(const std::vector<ModelInput> &Inputs) {
  std::string S;
  for (const ModelInput &In : Inputs)
    S += (S.empty() ? "'" : ", '") + In.Name + "'";
  return S;
}

/// The file of input I in the sample directory Dir (see the file comment).
llvm::Expected<std::string> inputFile(const std::string &Dir,
                                      const std::vector<ModelInput> &Inputs,
                                      size_t I) {
  auto Find = [&](const std::string &Stem) -> llvm::Expected<std::string> {
    std::vector<std::string> Found;
    for (const char *Ext : {".npy", ".pb"}) {
      llvm::SmallString<256> P(Dir);
      llvm::sys::path::append(P, Stem + Ext);
      if (llvm::sys::fs::is_regular_file(P))
        Found.push_back(P.str().str());
    }
    if (Found.size() > 1)
      return makeError("'{}' and '{}' both give input '{}'; keep one", Found[0],
                       Found[1], Inputs[I].Name);
    return Found.empty() ? std::string() : Found[0];
  };
  const std::string &Name = Inputs[I].Name;
  bool Usable = !Name.empty() && Name.find('/') == std::string::npos &&
                Name != "." && Name != "..";
  if (Usable) {
    auto Named = Find(Name);
    if (!Named || !Named->empty())
      return Named;
  }
  std::string Positional = "input_" + std::to_string(I);
  auto P = Find(Positional);
  if (!P || !P->empty())
    return P;
  return makeError("sample directory '{}' has no file for input '{}' "
                   "(expected {}{}.npy or .pb)",
                   Dir, Name, Usable ? Name + ".npy, " + Name + ".pb, " : "",
                   Positional);
}

/// The samples of one sample directory: every input's file read, batches
/// split alike.
llvm::Error readSampleDir(const std::string &Dir,
                          const std::vector<ModelInput> &Inputs,
                          std::vector<Sample> &Out) {
  std::vector<std::vector<std::vector<uint8_t>>> PerInput;
  std::string First;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    auto Path = inputFile(Dir, Inputs, I);
    if (!Path)
      return Path.takeError();
    auto Samples = readInputFile(*Path, Inputs[I]);
    if (!Samples)
      return Samples.takeError();
    if (I == 0)
      First = *Path;
    else if (Samples->size() != PerInput[0].size())
      return makeError("'{}' holds {} samples but '{}' holds {}; every "
                       "input of a sample directory needs as many",
                       *Path, Samples->size(), First, PerInput[0].size());
    PerInput.push_back(std::move(*Samples));
  }
  for (size_t S = 0; S < PerInput[0].size(); ++S) {
    Sample One;
    for (auto &Input : PerInput)
      One.push_back(std::move(Input[S]));
    Out.push_back(std::move(One));
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<Sample>>
readCalibrationSet(const std::string &Dir,
                   const std::vector<ModelInput> &Inputs) {
  if (Inputs.empty())
    return makeError("the model has no inputs to calibrate");
  std::vector<Entry> Entries;
  if (llvm::sys::fs::is_regular_file(Dir)) {
    Entries.push_back({llvm::sys::path::filename(Dir).str(), Dir, false});
  } else {
    auto Listed = listDir(Dir);
    if (!Listed)
      return Listed.takeError();
    Entries = std::move(*Listed);
  }
  bool AnyDir = false, AnyFile = false;
  for (const Entry &E : Entries) {
    AnyDir |= E.IsDir;
    AnyFile |= !E.IsDir && isTensorFile(E.Name);
  }
  if (AnyDir && AnyFile)
    return makeError("calibration directory '{}' holds both tensor files and "
                     "subdirectories; use one layout: files (one input) or "
                     "one subdirectory per sample",
                     Dir);
  std::vector<Sample> Out;
  if (AnyDir) {
    for (const Entry &E : Entries)
      if (E.IsDir)
        if (auto Err = readSampleDir(E.Path, Inputs, Out))
          return Err;
  } else if (AnyFile) {
    if (Inputs.size() != 1)
      return makeError("calibration directory '{}' holds files, which is "
                       "for models of one input; this model has {} ({}): "
                       "give one subdirectory per sample with a file per "
                       "input",
                       Dir, Inputs.size(), inputNames(Inputs));
    for (const Entry &E : Entries) {
      if (!isTensorFile(E.Name))
        return makeError("'{}': not a .npy or .pb file", E.Path);
      auto Samples = readInputFile(E.Path, Inputs[0]);
      if (!Samples)
        return Samples.takeError();
      for (auto &S : *Samples)
        Out.push_back(Sample{std::move(S)});
    }
  }
  if (Out.empty())
    return makeError("calibration directory '{}' holds no .npy or .pb files "
                     "nor sample subdirectories",
                     Dir);
  return Out;
}

} // namespace cuvil::quant
