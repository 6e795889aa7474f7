//===- SupportObject.cpp - The runtime support code, compiled once --------===//
#include "codegen/SupportObject.h"

#include "codegen/Backend.h"
#include "codegen/KernelLibrary.h"
#include "ir/CacheRoot.h"
#include "ir/Diagnostic.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <optional>

namespace cuvil {

namespace {

constexpr llvm::StringLiteral Magic = "cuvil support object 1\n";

bool isWeakHelper(llvm::StringRef Name) {
  for (const char *S : WeakRuntimeSymbols)
    if (Name == S)
      return true;
  return false;
}

/// The file this code was loaded from (cuvilc, or a library holding the
/// compiler) and its time stamp and size: a rebuilt compiler may generate
/// other code from the same bitcode. nullopt when it cannot be told.
std::optional<std::string> compilerIdentity() {
  static const char Anchor = 0;
  Dl_info Info;
  if (!dladdr(&Anchor, &Info) || !Info.dli_fname || !*Info.dli_fname)
    return std::nullopt;
  llvm::sys::fs::file_status Status;
  if (llvm::sys::fs::status(Info.dli_fname, Status))
    return std::nullopt;
  return fmt::format(
      "{}:{}:{}", Info.dli_fname,
      Status.getLastModificationTime().time_since_epoch().count(),
      Status.getSize());
}

/// Everything the support object depends on: the kernel library's bytes,
/// the target machine's settings, LLVM and the compiler binary.
std::optional<std::string> cacheKey(const TargetInfo &T,
                                    llvm::StringRef Bitcode) {
  std::optional<std::string> Compiler = compilerIdentity();
  if (!Compiler)
    return std::nullopt;
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|LLVM {}|kernels {:016x}|{}\n",
                     T.Name, T.Triple, T.CPU, T.Features, T.ABI, T.CodeModel,
                     T.PIC ? "pic" : "static", LLVM_VERSION_STRING,
                     llvm::xxh3_64bits(Bitcode), *Compiler);
}

void put(std::string &Out, uint64_t V) {
  Out.append(reinterpret_cast<const char *>(&V), sizeof V);
}
void put(std::string &Out, llvm::StringRef S) {
  put(Out, static_cast<uint64_t>(S.size()));
  Out += S;
}

/// Reads back what put wrote; every read is bounds-checked, so a damaged
/// or foreign file only fails to decode.
class Reader {
public:
  explicit Reader(llvm::StringRef In) : In(In) {}
  bool get(uint64_t &V) {
    if (In.size() < sizeof V)
      return false;
    std::memcpy(&V, In.data(), sizeof V);
    In = In.drop_front(sizeof V);
    return true;
  }
  bool get(std::string &S) {
    uint64_t N = 0;
    if (!get(N) || N > In.size())
      return false;
    S = In.take_front(N).str();
    In = In.drop_front(N);
    return true;
  }
  bool atEnd() const { return In.empty(); }

private:
  llvm::StringRef In;
};

std::string encode(const std::string &Key, const SupportObject &S) {
  std::string Out(Magic);
  put(Out, Key);
  put(Out, S.Object);
  put(Out, static_cast<uint64_t>(S.Bounds.size()));
  for (const auto &[Name, B] : S.Bounds) {
    put(Out, Name);
    put(Out, static_cast<uint64_t>(B.Known));
    put(Out, B.Bytes);
    put(Out, B.Reason);
    put(Out, static_cast<uint64_t>(B.Path.size()));
    for (const std::string &P : B.Path)
      put(Out, P);
  }
  return Out;
}

std::optional<SupportObject> decode(llvm::StringRef In,
                                    const std::string &Key) {
  if (!In.consume_front(Magic))
    return std::nullopt;
  Reader R(In);
  std::string StoredKey;
  SupportObject S;
  uint64_t Count = 0;
  if (!R.get(StoredKey) || StoredKey != Key || !R.get(S.Object) ||
      !R.get(Count))
    return std::nullopt;
  for (uint64_t I = 0; I < Count; ++I) {
    std::string Name;
    StackBound B;
    uint64_t Known = 0, Steps = 0;
    if (!R.get(Name) || !R.get(Known) || !R.get(B.Bytes) || !R.get(B.Reason) ||
        !R.get(Steps))
      return std::nullopt;
    B.Known = Known != 0;
    for (uint64_t K = 0; K < Steps; ++K)
      if (!R.get(B.Path.emplace_back()))
        return std::nullopt;
    S.Bounds[Name] = std::move(B);
  }
  if (!R.atEnd())
    return std::nullopt;
  for (const auto &[Name, B] : S.Bounds)
    if (!isWeakHelper(Name))
      S.Localize.insert(Name);
  return S;
}

/// Compiles the support code of T's kernel library.
llvm::Expected<SupportObject> generate(const TargetInfo &T,
                                       llvm::TargetMachine &TM) {
  llvm::LLVMContext Ctx;
  auto ModOrErr = loadKernelModule(T, TM, Ctx);
  if (!ModOrErr)
    return ModOrErr.takeError();
  llvm::Module &M = **ModOrErr;
  M.setModuleIdentifier("cuvil-support");
  M.setSourceFileName("cuvil-support");
  std::set<std::string> Roots(std::begin(WeakRuntimeSymbols),
                              std::end(WeakRuntimeSymbols));
  Roots.insert(std::begin(SupportEntrySymbols), std::end(SupportEntrySymbols));
  if (auto E = materializeReachable(M, Roots))
    return E;
  std::set<std::string> Defined;
  for (const std::string &Name : Roots) {
    llvm::Function *F = M.getFunction(Name);
    if (!F || F->isDeclaration())
      continue;
    Defined.insert(Name);
    if (isWeakHelper(Name)) {
      F->setLinkage(llvm::GlobalValue::WeakAnyLinkage);
      continue;
    }
    // Global only to reach the model's part; local again once merged.
    F->setLinkage(llvm::GlobalValue::ExternalLinkage);
    F->setVisibility(llvm::GlobalValue::HiddenVisibility);
    F->setDSOLocal(true);
  }
  llvm::internalizeModule(M, [&](const llvm::GlobalValue &GV) {
    return Defined.count(GV.getName().str()) != 0;
  });
  dedupeIdents(M);
  std::string VerifyMsg;
  llvm::raw_string_ostream VOS(VerifyMsg);
  if (llvm::verifyModule(M, &VOS))
    return makeError("internal error: invalid support module: {}", VerifyMsg);
  optimizeModule(M, TM);

  SupportObject S;
  FrameSizes Frames;
  if (auto E = emitFile(M, TM, llvm::CodeGenFileType::ObjectFile, T.Name,
                        S.Object, &Frames))
    return E;
  const std::vector<std::string> Helpers(std::begin(WeakRuntimeSymbols),
                                         std::end(WeakRuntimeSymbols));
  for (const std::string &Name : Defined) {
    if (const llvm::Function *F = M.getFunction(Name); !F || F->isDeclaration())
      continue; // the optimiser found it unused (cannot be: it is kept)
    S.Bounds[Name] = entryStackBound(M, T.Triple, Name, Frames, Helpers);
    if (!isWeakHelper(Name))
      S.Localize.insert(Name);
  }
  return S;
}

/// Writes Bytes to Path through a temporary file renamed into place, so
/// that a compiler running at the same time reads the whole file or none.
/// Failing is not an error: the next run generates the object again.
void storeAtomically(const std::string &Dir, const std::string &Path,
                     llvm::StringRef Bytes) {
  if (llvm::sys::fs::create_directories(Dir))
    return;
  int FD = -1;
  llvm::SmallString<256> Temp;
  if (llvm::sys::fs::createUniqueFile(Dir + "/.tmp-%%%%%%%%", FD, Temp))
    return;
  bool Ok;
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Bytes;
    OS.close();
    Ok = !OS.has_error();
    OS.clear_error();
  }
  if (!Ok || llvm::sys::fs::rename(Temp, Path))
    (void)llvm::sys::fs::remove(Temp);
}

} // namespace

llvm::Expected<SupportObject>
supportObject(const TargetInfo &T, llvm::TargetMachine &TM, StageTimer *Timer) {
  beginStage(Timer, "support-code");
  auto Bitcode = targetKernelBitcode(T);
  if (!Bitcode)
    return Bitcode.takeError();
  std::optional<std::string> Root = cacheRoot();
  std::optional<std::string> Key = Root ? cacheKey(T, *Bitcode) : std::nullopt;
  std::string Dir, Path;
  if (Key) {
    Dir = *Root + "/support";
    Path = fmt::format("{}/{}-{:016x}.bin", Dir, T.Name,
                       llvm::xxh3_64bits(llvm::StringRef(*Key)));
    if (auto Buf =
            llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                        /*RequiresNullTerminator=*/false))
      if (std::optional<SupportObject> S = decode((*Buf)->getBuffer(), *Key))
        return std::move(*S);
  }
  auto S = generate(T, TM);
  if (S && Key)
    storeAtomically(Dir, Path, encode(*Key, *S));
  return S;
}

} // namespace cuvil
