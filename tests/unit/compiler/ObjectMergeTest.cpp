//===- ObjectMergeTest.cpp - Joining the code generator's object parts ----===//
#include "codegen/ObjectMerge.h"
#include "codegen/Backend.h"

#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>

#include <map>

using namespace cuvil;

namespace {

// Part 0 defines the entry point, which calls g of part 1; g calls f of
// part 0 and ext, which neither defines. f and g were internal to the
// module: hidden globals in the parts, to be local in the merged object.
const char *Part0 = R"(
declare hidden void @g(ptr)
define void @entry(ptr %p) {
  call void @g(ptr %p)
  ret void
}
define hidden void @f(ptr %p) {
  store i32 1, ptr %p
  ret void
}
)";
const char *Part1 = R"(
declare hidden void @f(ptr)
declare void @ext(ptr)
define hidden void @g(ptr %p) {
  call void @f(ptr %p)
  call void @ext(ptr %p)
  ret void
}
)";

std::string objectOf(const char *IR, const std::string &Triple,
                     const std::string &Features) {
  llvm::InitializeAllTargetInfos();
  llvm::InitializeAllTargets();
  llvm::InitializeAllTargetMCs();
  llvm::InitializeAllAsmPrinters();
  llvm::InitializeAllAsmParsers(); // module assembly
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Err;
  auto M = llvm::parseAssemblyString(IR, Err, Ctx);
  EXPECT_TRUE(M) << Err.getMessage().str();
  M->setTargetTriple(Triple);
  std::string Error;
  const llvm::Target *T = llvm::TargetRegistry::lookupTarget(Triple, Error);
  EXPECT_TRUE(T) << Error;
  std::unique_ptr<llvm::TargetMachine> TM(T->createTargetMachine(
      Triple, "generic", Features, llvm::TargetOptions(), llvm::Reloc::Static));
  M->setDataLayout(TM->createDataLayout());
  std::string Object;
  llvm::Error E =
      emitFile(*M, *TM, llvm::CodeGenFileType::ObjectFile, Triple, Object);
  EXPECT_FALSE(E) << llvm::toString(std::move(E));
  return Object;
}

struct SymbolFacts {
  bool Local = false;
  bool Defined = false;
};

void checkMerged(const std::string &Triple, const std::string &Features) {
  std::vector<std::string> Parts = {objectOf(Part0, Triple, Features),
                                    objectOf(Part1, Triple, Features)};
  auto Merged = mergeObjects(Parts, {"f", "g"});
  ASSERT_TRUE(bool(Merged)) << llvm::toString(Merged.takeError());
  auto Obj = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(*Merged, "merged.o"));
  ASSERT_TRUE(bool(Obj)) << llvm::toString(Obj.takeError());
  std::map<std::string, SymbolFacts> Syms;
  for (const llvm::object::SymbolRef &S : (*Obj)->symbols()) {
    auto Name = S.getName();
    auto Flags = S.getFlags();
    ASSERT_TRUE(bool(Name) && bool(Flags));
    SymbolFacts &F = Syms[Name->str()];
    F.Local = !(*Flags & llvm::object::SymbolRef::SF_Global);
    F.Defined = !(*Flags & llvm::object::SymbolRef::SF_Undefined);
  }
  EXPECT_TRUE(Syms["f"].Local && Syms["f"].Defined) << Triple;
  EXPECT_TRUE(Syms["g"].Local && Syms["g"].Defined) << Triple;
  EXPECT_TRUE(!Syms["entry"].Local && Syms["entry"].Defined) << Triple;
  EXPECT_TRUE(!Syms["ext"].Local && !Syms["ext"].Defined) << Triple;
  // Each part's code stays a section of its own; every call still names
  // its callee.
  unsigned Texts = 0;
  std::multiset<std::string> Callees;
  for (const llvm::object::SectionRef &S : (*Obj)->sections()) {
    auto Name = S.getName();
    ASSERT_TRUE(bool(Name));
    Texts += *Name == ".text";
    auto Target = S.getRelocatedSection();
    ASSERT_TRUE(bool(Target));
    if (*Target == (*Obj)->section_end())
      continue;
    auto TargetName = (*Target)->getName();
    if (!TargetName || *TargetName != ".text")
      continue; // e.g. the unwind tables, which name the sections
    for (const llvm::object::RelocationRef &R : S.relocations()) {
      auto Sym = R.getSymbol();
      if (Sym == (*Obj)->symbol_end())
        continue; // RISC-V's relaxation markers name no symbol
      auto SymName = Sym->getName();
      if (SymName && !SymName->starts_with(".")) // not a RISC-V temp label
        Callees.insert(SymName->str());
    }
  }
  EXPECT_EQ(Texts, 2u) << Triple;
  EXPECT_EQ(Callees, (std::multiset<std::string>{"ext", "f", "g"})) << Triple;
}

TEST(ObjectMerge, PartsJoinWithTheirInternalSymbolsLocalAgain) {
  checkMerged("aarch64-none-elf", "");
  checkMerged("riscv64-unknown-elf", "+m,+a,+f,+d,+c,+relax");
  checkMerged("x86_64-unknown-linux-gnu", "");
}

TEST(ObjectMerge, RefusesTwoDefinitionsAndALocalSymbolNoPartDefines) {
  const std::string A = objectOf(Part0, "aarch64-none-elf", "");
  auto Twice = mergeObjects({A, A}, {});
  ASSERT_FALSE(bool(Twice));
  EXPECT_NE(llvm::toString(Twice.takeError()).find("'entry' is defined in"),
            std::string::npos);
  auto Missing = mergeObjects({A}, {"g"});
  ASSERT_FALSE(bool(Missing));
  EXPECT_NE(llvm::toString(Missing.takeError()).find("'g' is defined in none"),
            std::string::npos);
}

// The embedded weights' placeholder, as EntryBuilder writes it: a NOBITS
// section in module assembly, its symbol used by code.
const char *WithPlaceholder = R"(
module asm "  .section .cuvil.t.weights,\22a\22,%nobits"
module asm "  .balign 64"
module asm "  .globl cuvil_t_weights"
module asm "cuvil_t_weights:"
module asm "  .zero 100"
module asm "  .text"
@cuvil_t_weights = external constant [100 x i8], align 64
define ptr @entry() {
  ret ptr @cuvil_t_weights
}
)";

TEST(ObjectMerge, FillsTheWeightsPlaceholderOfAMergedObject) {
  std::vector<uint8_t> Blob(100);
  for (size_t I = 0; I < Blob.size(); ++I)
    Blob[I] = static_cast<uint8_t>(3 * I + 1);
  for (const char *Triple : {"aarch64-none-elf", "riscv64-unknown-elf",
                             "x86_64-unknown-linux-gnu"}) {
    auto Merged = mergeObjects(
        {objectOf(WithPlaceholder, Triple, ""), objectOf(Part1, Triple, "")},
        {});
    ASSERT_TRUE(bool(Merged)) << llvm::toString(Merged.takeError());
    std::string Object = *Merged;
    // The wrong size, or a section that is not a placeholder, is refused.
    std::string Same = Object;
    auto Short = fillNobitsSection(Same, ".cuvil.t.weights",
                                   llvm::ArrayRef(Blob).drop_back());
    EXPECT_NE(llvm::toString(std::move(Short)).find("NOBITS placeholder of 99"),
              std::string::npos);
    auto Text = fillNobitsSection(Same, ".text", Blob);
    EXPECT_NE(llvm::toString(std::move(Text)).find("the object has two"),
              std::string::npos);
    auto None = fillNobitsSection(Same, ".data", Blob);
    EXPECT_NE(llvm::toString(std::move(None)).find("the object has none"),
              std::string::npos);
    EXPECT_EQ(Same, Object) << "a refused fill changed the object";

    llvm::Error E = fillNobitsSection(Object, ".cuvil.t.weights", Blob);
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    auto Obj = llvm::object::ObjectFile::createObjectFile(
        llvm::MemoryBufferRef(Object, "filled.o"));
    ASSERT_TRUE(bool(Obj)) << llvm::toString(Obj.takeError());
    bool Found = false;
    for (const llvm::object::SectionRef &S : (*Obj)->sections()) {
      auto Name = S.getName();
      ASSERT_TRUE(bool(Name));
      if (*Name != ".cuvil.t.weights")
        continue;
      Found = true;
      EXPECT_FALSE(S.isBSS()) << Triple;
      EXPECT_EQ(S.getAlignment().value(), 64u) << Triple;
      auto Contents = S.getContents();
      ASSERT_TRUE(bool(Contents));
      EXPECT_EQ(*Contents,
                llvm::StringRef(reinterpret_cast<const char *>(Blob.data()),
                                Blob.size()))
          << Triple;
      const auto *Elf = llvm::cast<llvm::object::ELF64LEObjectFile>(Obj->get());
      auto Header = Elf->getELFFile().getSection(S.getIndex());
      ASSERT_TRUE(bool(Header));
      EXPECT_EQ((*Header)->sh_offset % 64, 0u) << Triple;
    }
    EXPECT_TRUE(Found) << Triple;
    // The symbol still names the filled section's start.
    for (const llvm::object::SymbolRef &Sym : (*Obj)->symbols()) {
      auto Name = Sym.getName();
      ASSERT_TRUE(bool(Name));
      if (*Name != "cuvil_t_weights")
        continue;
      auto Section = Sym.getSection();
      auto Value = Sym.getValue();
      ASSERT_TRUE(bool(Section) && bool(Value));
      ASSERT_NE(*Section, (*Obj)->section_end());
      EXPECT_EQ((*Section)->getName().get(), ".cuvil.t.weights") << Triple;
      EXPECT_EQ(*Value, 0u) << Triple;
    }
  }
}

} // namespace
