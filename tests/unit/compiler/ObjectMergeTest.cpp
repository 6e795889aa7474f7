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

} // namespace
