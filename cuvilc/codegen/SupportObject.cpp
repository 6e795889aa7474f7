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
#include <llvm/Support/Path.h>
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
/// compiler), with its time stamp and size: a rebuilt compiler may
/// generate other code from the same bitcode.
struct Compiler {
  std::string Path, Stamp;
};

std::optional<Compiler> thisCompiler() {
  static const char Anchor = 0;
  Dl_info Info;
  if (!dladdr(&Anchor, &Info) || !Info.dli_fname || !*Info.dli_fname)
    return std::nullopt;
  llvm::sys::fs::file_status Status;
  if (llvm::sys::fs::status(Info.dli_fname, Status))
    return std::nullopt;
  return Compiler{
      Info.dli_fname,
      fmt::format("{}:{}",
                  Status.getLastModificationTime().time_since_epoch().count(),
                  Status.getSize())};
}

/// The cache file of one support object: Dir/<target>-<P>-<K>.bin, where
/// P hashes the compiler's path and K everything the object depends on
/// (Key: the kernel library's bytes, the target machine's settings, LLVM
/// and the compiler binary). The files of one target and compiler path
/// (Prefix) are those a rebuilt compiler at that path replaces.
struct CacheEntry {
  std::string Dir, Prefix, Path, Key;
};

std::optional<CacheEntry> cacheEntry(const std::string &Root,
                                     const TargetInfo &T,
                                     llvm::StringRef Bitcode) {
  std::optional<Compiler> C = thisCompiler();
  if (!C)
    return std::nullopt;
  CacheEntry E;
  E.Key = fmt::format("{}|{}|{}|{}|{}|{}|{}|LLVM {}|kernels {:016x}|{}|{}\n",
                      T.Name, T.Triple, T.CPU, T.Features, T.ABI, T.CodeModel,
                      T.PIC ? "pic" : "static", LLVM_VERSION_STRING,
                      llvm::xxh3_64bits(Bitcode), C->Path, C->Stamp);
  E.Dir = Root + "/support";
  E.Prefix =
      fmt::format("{}-{:08x}-", T.Name,
                  llvm::xxh3_64bits(llvm::StringRef(C->Path)) & 0xffffffffu);
  E.Path = fmt::format("{}/{}{:016x}.bin", E.Dir, E.Prefix,
                       llvm::xxh3_64bits(llvm::StringRef(E.Key)));
  return E;
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
  // Kept (external or weak), every function of Defined is still defined.
  for (const std::string &Name : Defined)
    S.Bounds[Name] = entryStackBound(M, T.Triple, Name, Frames, Helpers);
  return S;
}

/// Writes Bytes to E's file through a temporary file renamed into place,
/// so that a compiler running at the same time reads the whole file or
/// none, then removes the files an earlier build of the compiler at the
/// same path left for the target. Failing is not an error: the next run
/// generates the object again.
void store(const CacheEntry &E, llvm::StringRef Bytes) {
  if (llvm::sys::fs::create_directories(E.Dir))
    return;
  int FD = -1;
  llvm::SmallString<256> Temp;
  if (llvm::sys::fs::createUniqueFile(E.Dir + "/.tmp-%%%%%%%%", FD, Temp))
    return;
  bool Ok;
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Bytes;
    OS.close();
    Ok = !OS.has_error();
    OS.clear_error();
  }
  if (!Ok || llvm::sys::fs::rename(Temp, E.Path)) {
    (void)llvm::sys::fs::remove(Temp);
    return;
  }
  std::error_code EC;
  std::vector<std::string> Stale;
  for (llvm::sys::fs::directory_iterator It(E.Dir, EC), End; !EC && It != End;
       It.increment(EC)) {
    llvm::StringRef Name = llvm::sys::path::filename(It->path());
    if (Name.starts_with(E.Prefix) && Name.ends_with(".bin") &&
        It->path() != E.Path)
      Stale.push_back(It->path());
  }
  for (const std::string &P : Stale)
    (void)llvm::sys::fs::remove(P);
}

} // namespace

llvm::Expected<SupportObject>
supportObject(const TargetInfo &T, llvm::TargetMachine &TM, StageTimer *Timer) {
  beginStage(Timer, "support-code");
  auto Bitcode = targetKernelBitcode(T);
  if (!Bitcode)
    return Bitcode.takeError();
  std::optional<CacheEntry> Entry;
  if (std::optional<std::string> Root = cacheRoot())
    Entry = cacheEntry(*Root, T, *Bitcode);
  std::optional<SupportObject> Cached;
  if (Entry)
    if (auto Buf =
            llvm::MemoryBuffer::getFile(Entry->Path, /*IsText=*/false,
                                        /*RequiresNullTerminator=*/false))
      Cached = decode((*Buf)->getBuffer(), Entry->Key);
  SupportObject S;
  if (Cached) {
    S = std::move(*Cached);
  } else {
    auto Generated = generate(T, TM);
    if (!Generated)
      return Generated.takeError();
    S = std::move(*Generated);
    if (Entry)
      store(*Entry, encode(Entry->Key, S));
  }
  // The functions it defines (the ones with a bound) but the weak helpers.
  for (const auto &[Name, B] : S.Bounds)
    if (!isWeakHelper(Name))
      S.Localize.insert(Name);
  return S;
}

} // namespace cuvil
