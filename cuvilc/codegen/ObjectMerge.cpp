//===- ObjectMerge.cpp - Join relocatable ELF objects into one ------------===//
#include "codegen/ObjectMerge.h"

#include "ir/Diagnostic.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELF.h>
#include <llvm/Support/SwapByteOrder.h>

#include <cstring>
#include <map>
#include <optional>

namespace cuvil {

namespace {

using ELFT = llvm::object::ELF64LE;
using File = llvm::object::ELFFile<ELFT>;
using Shdr = ELFT::Shdr;

/// A section of the merged object.
struct OutSection {
  std::string Name;
  llvm::ELF::Elf64_Shdr Header{};
  llvm::StringRef Data;                   ///< Contents (not for NOBITS).
  std::vector<llvm::ELF::Elf64_Rela> Rel; ///< For a RELA section.
};

/// A string table under construction (section and symbol names share it,
/// as in LLVM's own objects).
class StringTable {
public:
  StringTable() { Bytes.push_back('\0'); }
  uint32_t add(llvm::StringRef S) {
    if (S.empty())
      return 0;
    auto [It, New] = Offsets.emplace(S.str(), Bytes.size());
    if (New) {
      Bytes.append(S.begin(), S.end());
      Bytes.push_back('\0');
    }
    return static_cast<uint32_t>(It->second);
  }
  const std::string &bytes() const { return Bytes; }

private:
  std::string Bytes;
  std::map<std::string, size_t> Offsets;
};

/// Sections that describe the whole file rather than code or data: one
/// copy of each is kept (all parts come from one module and target).
bool isPerFile(const Shdr &S, llvm::StringRef Name) {
  return Name == ".comment" || Name == ".note.GNU-stack" ||
         S.sh_type == llvm::ELF::SHT_RISCV_ATTRIBUTES ||
         S.sh_type == llvm::ELF::SHT_ARM_ATTRIBUTES;
}

struct Input {
  File Obj;
  std::vector<const Shdr *> Sections;
  const Shdr *SymTab = nullptr;
  /// Output section of each input section; 0 when it has none.
  std::vector<uint32_t> SectionMap;
  /// Output symbol of each input symbol.
  std::vector<uint32_t> SymbolMap;
};

llvm::Error bad(size_t Part, const llvm::Twine &What) {
  return makeError("internal error: merging the code generator's object "
                   "parts: part {}: {}",
                   Part, What.str());
}

/// A global (or localized) symbol, by name, as the merged object has it.
struct Global {
  llvm::ELF::Elf64_Sym Sym{};
  bool Defined = false;
  size_t DefinedIn = 0;
  uint32_t OutIndex = 0;
};

uint16_t outSectionIndex(const Input &In, uint16_t Index) {
  if (Index == llvm::ELF::SHN_UNDEF || Index >= llvm::ELF::SHN_LORESERVE)
    return Index; // undefined, absolute, common
  return static_cast<uint16_t>(In.SectionMap[Index]);
}

} // namespace

llvm::Expected<std::string>
mergeObjects(const std::vector<std::string> &Parts,
             const std::set<std::string> &Localize) {
  if (!llvm::sys::IsLittleEndianHost)
    return makeError("internal error: merging objects needs a little-endian "
                     "host");
  std::vector<Input> Inputs;
  for (size_t P = 0; P < Parts.size(); ++P) {
    auto Obj = File::create(Parts[P]);
    if (!Obj)
      return Obj.takeError();
    Inputs.push_back({std::move(*Obj), {}, nullptr, {}, {}});
    Input &In = Inputs.back();
    const auto &Eh = In.Obj.getHeader();
    if (Eh.e_type != llvm::ELF::ET_REL)
      return bad(P, "not a relocatable object");
    const auto &E0 = Inputs.front().Obj.getHeader();
    if (Eh.e_machine != E0.e_machine || Eh.e_flags != E0.e_flags)
      return bad(P, "another machine or other flags than part 0");
    auto Sections = In.Obj.sections();
    if (!Sections)
      return Sections.takeError();
    for (const Shdr &S : *Sections) {
      In.Sections.push_back(&S);
      if (S.sh_type == llvm::ELF::SHT_SYMTAB)
        In.SymTab = &S;
      if (S.sh_type == llvm::ELF::SHT_GROUP ||
          S.sh_type == llvm::ELF::SHT_SYMTAB_SHNDX ||
          S.sh_type == llvm::ELF::SHT_REL)
        return bad(P, "a section group, extended index or REL section");
    }
    if (!In.SymTab)
      return bad(P, "no symbol table");
  }

  // Sections: every part's own, in part order; one copy of the per-file
  // ones; relocation sections follow after all others.
  std::vector<OutSection> Out(1); // index 0: the null section
  std::map<std::string, uint32_t> PerFile;
  for (size_t P = 0; P < Inputs.size(); ++P) {
    Input &In = Inputs[P];
    In.SectionMap.assign(In.Sections.size(), 0);
    for (size_t I = 1; I < In.Sections.size(); ++I) {
      const Shdr &S = *In.Sections[I];
      if (S.sh_type == llvm::ELF::SHT_SYMTAB ||
          S.sh_type == llvm::ELF::SHT_STRTAB ||
          S.sh_type == llvm::ELF::SHT_RELA ||
          S.sh_type == llvm::ELF::SHT_LLVM_ADDRSIG)
        continue;
      auto Name = In.Obj.getSectionName(S);
      if (!Name)
        return Name.takeError();
      if (isPerFile(S, *Name)) {
        auto [It, New] =
            PerFile.emplace(Name->str(), static_cast<uint32_t>(Out.size()));
        In.SectionMap[I] = It->second;
        if (!New)
          continue;
      } else {
        In.SectionMap[I] = static_cast<uint32_t>(Out.size());
      }
      OutSection O;
      O.Name = Name->str();
      O.Header.sh_type = S.sh_type;
      O.Header.sh_flags = S.sh_flags;
      O.Header.sh_size = S.sh_size;
      O.Header.sh_addralign = S.sh_addralign;
      O.Header.sh_entsize = S.sh_entsize;
      O.Header.sh_link = S.sh_link; // remapped below (link-order sections)
      O.Header.sh_info = S.sh_info;
      if (S.sh_type != llvm::ELF::SHT_NOBITS) {
        auto Data = In.Obj.getSectionContents(S);
        if (!Data)
          return Data.takeError();
        O.Data = llvm::StringRef(reinterpret_cast<const char *>(Data->data()),
                                 Data->size());
      }
      Out.push_back(std::move(O));
    }
    for (size_t I = 1; I < In.Sections.size(); ++I)
      if (uint32_t O = In.SectionMap[I];
          O && (In.Sections[I]->sh_flags & llvm::ELF::SHF_LINK_ORDER)) {
        if (In.Sections[I]->sh_link >= In.SectionMap.size())
          return bad(P, "a section links to no section");
        Out[O].Header.sh_link = In.SectionMap[In.Sections[I]->sh_link];
      }
  }

  // Symbols: the local ones of every part, then the localized ones, then
  // the globals, each global once.
  std::vector<llvm::ELF::Elf64_Sym> Syms(1);
  StringTable Strings;
  std::map<std::string, Global> Globals;
  std::vector<std::string> GlobalOrder;
  for (size_t P = 0; P < Inputs.size(); ++P) {
    Input &In = Inputs[P];
    auto SymsIn = In.Obj.symbols(In.SymTab);
    auto StrTab = In.Obj.getStringTableForSymtab(*In.SymTab);
    if (!SymsIn)
      return SymsIn.takeError();
    if (!StrTab)
      return StrTab.takeError();
    In.SymbolMap.assign(SymsIn->size(), 0);
    for (size_t K = 1; K < SymsIn->size(); ++K) {
      const auto &S = (*SymsIn)[K];
      auto Name = S.getName(*StrTab);
      if (!Name)
        return Name.takeError();
      if (S.st_shndx != llvm::ELF::SHN_UNDEF &&
          S.st_shndx < llvm::ELF::SHN_LORESERVE &&
          (S.st_shndx >= In.SectionMap.size() || !In.SectionMap[S.st_shndx]))
        return bad(P, "symbol '" + *Name + "' is in a section not kept");
      llvm::ELF::Elf64_Sym O{};
      O.st_name = Strings.add(*Name);
      O.st_info = S.st_info;
      O.st_other = S.st_other;
      O.st_shndx = outSectionIndex(In, S.st_shndx);
      O.st_value = S.st_value;
      O.st_size = S.st_size;
      if (S.getBinding() == llvm::ELF::STB_LOCAL) {
        In.SymbolMap[K] = static_cast<uint32_t>(Syms.size());
        Syms.push_back(O);
        continue;
      }
      auto [It, New] = Globals.emplace(Name->str(), Global{});
      if (New) {
        GlobalOrder.push_back(Name->str());
        It->second.Sym = O;
      }
      Global &G = It->second;
      if (S.st_shndx == llvm::ELF::SHN_UNDEF) {
        if (!G.Defined && S.getBinding() == llvm::ELF::STB_GLOBAL)
          G.Sym.setBinding(llvm::ELF::STB_GLOBAL); // a strong reference
        continue;
      }
      if (G.Defined)
        return bad(P, "symbol '" + *Name + "' is defined in part " +
                          llvm::Twine(G.DefinedIn) + " too");
      G.Defined = true;
      G.DefinedIn = P;
      G.Sym = O;
    }
  }
  uint32_t FirstGlobal = 0;
  for (int Pass = 0; Pass < 2; ++Pass) {
    const bool Locals = Pass == 0;
    if (!Locals)
      FirstGlobal = static_cast<uint32_t>(Syms.size());
    for (const std::string &N : GlobalOrder) {
      Global &G = Globals[N];
      if ((Localize.count(N) != 0) != Locals)
        continue;
      if (Locals) {
        if (!G.Defined)
          return makeError("internal error: merging the code generator's "
                           "object parts: '{}' is defined in none",
                           N);
        G.Sym.setBinding(llvm::ELF::STB_LOCAL);
        G.Sym.st_other = llvm::ELF::STV_DEFAULT;
      }
      G.OutIndex = static_cast<uint32_t>(Syms.size());
      Syms.push_back(G.Sym);
    }
  }
  for (size_t P = 0; P < Inputs.size(); ++P) {
    Input &In = Inputs[P];
    auto SymsIn = In.Obj.symbols(In.SymTab);
    auto StrTab = In.Obj.getStringTableForSymtab(*In.SymTab);
    for (size_t K = 1; K < SymsIn->size(); ++K)
      if ((*SymsIn)[K].getBinding() != llvm::ELF::STB_LOCAL)
        In.SymbolMap[K] =
            Globals[(*(*SymsIn)[K].getName(*StrTab)).str()].OutIndex;
  }

  // Relocations, with their sections and symbols renumbered.
  std::vector<OutSection> Relocs;
  for (size_t P = 0; P < Inputs.size(); ++P) {
    Input &In = Inputs[P];
    for (const Shdr *S : In.Sections) {
      if (S->sh_type != llvm::ELF::SHT_RELA)
        continue;
      auto Rels = In.Obj.relas(*S);
      if (!Rels)
        return Rels.takeError();
      if (S->sh_info >= In.SectionMap.size() || !In.SectionMap[S->sh_info]) {
        if (Rels->empty())
          continue;
        return bad(P, "relocations for a section not kept");
      }
      OutSection O;
      const uint32_t Target = In.SectionMap[S->sh_info];
      O.Name = ".rela" + Out[Target].Name;
      O.Header.sh_type = llvm::ELF::SHT_RELA;
      O.Header.sh_flags = llvm::ELF::SHF_INFO_LINK;
      O.Header.sh_addralign = 8;
      O.Header.sh_entsize = sizeof(llvm::ELF::Elf64_Rela);
      // sh_link: the symbol table, once its index is known.
      O.Header.sh_info = Target;
      for (const auto &R : *Rels) {
        llvm::ELF::Elf64_Rela OR{};
        OR.r_offset = R.r_offset;
        OR.r_addend = R.r_addend;
        const uint32_t Sym = R.getSymbol(false);
        if (Sym >= In.SymbolMap.size())
          return bad(P, "a relocation names no symbol");
        OR.setSymbolAndType(Sym ? In.SymbolMap[Sym] : 0, R.getType(false));
        O.Rel.push_back(OR);
      }
      O.Header.sh_size = O.Rel.size() * sizeof(llvm::ELF::Elf64_Rela);
      Relocs.push_back(std::move(O));
    }
  }
  // Section order: contents, symbol table, string table, relocations.
  const uint32_t SymTabAt = static_cast<uint32_t>(Out.size());
  {
    OutSection ST;
    ST.Name = ".symtab";
    ST.Header.sh_type = llvm::ELF::SHT_SYMTAB;
    ST.Header.sh_addralign = 8;
    ST.Header.sh_entsize = sizeof(llvm::ELF::Elf64_Sym);
    ST.Header.sh_link = SymTabAt + 1;
    ST.Header.sh_info = FirstGlobal;
    ST.Header.sh_size = Syms.size() * sizeof(llvm::ELF::Elf64_Sym);
    Out.push_back(std::move(ST));
    OutSection Str;
    Str.Name = ".strtab";
    Str.Header.sh_type = llvm::ELF::SHT_STRTAB;
    Str.Header.sh_addralign = 1;
    Out.push_back(std::move(Str));
  }
  for (OutSection &R : Relocs) {
    R.Header.sh_link = SymTabAt;
    Out.push_back(std::move(R));
  }
  for (OutSection &O : Out)
    O.Header.sh_name = Strings.add(O.Name);
  Out[SymTabAt + 1].Data = Strings.bytes();
  Out[SymTabAt + 1].Header.sh_size = Strings.bytes().size();

  // Layout: header, contents in section order, section headers.
  std::string Bytes(sizeof(llvm::ELF::Elf64_Ehdr), '\0');
  auto AlignTo = [&](uint64_t A) {
    if (A > 1)
      Bytes.resize((Bytes.size() + A - 1) / A * A, '\0');
  };
  for (size_t I = 1; I < Out.size(); ++I) {
    OutSection &O = Out[I];
    AlignTo(O.Header.sh_addralign);
    O.Header.sh_offset = Bytes.size();
    if (I == SymTabAt)
      Bytes.append(reinterpret_cast<const char *>(Syms.data()),
                   Syms.size() * sizeof(Syms[0]));
    else if (!O.Rel.empty())
      Bytes.append(reinterpret_cast<const char *>(O.Rel.data()),
                   O.Rel.size() * sizeof(O.Rel[0]));
    else if (O.Header.sh_type != llvm::ELF::SHT_NOBITS)
      Bytes.append(O.Data.data(), O.Data.size());
  }
  AlignTo(8);
  llvm::ELF::Elf64_Ehdr Eh{};
  std::memcpy(&Eh, Parts.front().data(), sizeof Eh);
  Eh.e_shoff = Bytes.size();
  Eh.e_shnum = static_cast<uint16_t>(Out.size());
  Eh.e_shstrndx = static_cast<uint16_t>(SymTabAt + 1);
  Eh.e_phoff = 0;
  Eh.e_phnum = 0;
  if (Out.size() >= llvm::ELF::SHN_LORESERVE)
    return makeError("internal error: merging the code generator's object "
                     "parts: too many sections");
  for (const OutSection &O : Out)
    Bytes.append(reinterpret_cast<const char *>(&O.Header), sizeof O.Header);
  std::memcpy(Bytes.data(), &Eh, sizeof Eh);
  return Bytes;
}

llvm::Error fillNobitsSection(std::string &Object, llvm::StringRef Name,
                              llvm::ArrayRef<uint8_t> Bytes) {
  auto Fail = [&](const llvm::Twine &Why) {
    return makeError("internal error: filling section {} of the object: {}",
                     Name.str(), Why.str());
  };
  auto Obj = File::create(Object);
  if (!Obj)
    return Obj.takeError();
  auto Sections = Obj->sections();
  if (!Sections)
    return Sections.takeError();
  const uint64_t ShOff = Obj->getHeader().e_shoff;
  std::optional<size_t> Index;
  Shdr Header{};
  for (size_t I = 0; I < Sections->size(); ++I) {
    auto SectionName = Obj->getSectionName((*Sections)[I]);
    if (!SectionName)
      return SectionName.takeError();
    if (*SectionName != Name)
      continue;
    if (Index)
      return Fail("the object has two");
    Index = I;
    Header = (*Sections)[I];
  }
  if (!Index)
    return Fail("the object has none");
  if (Header.sh_type != llvm::ELF::SHT_NOBITS || Header.sh_size != Bytes.size())
    return Fail(llvm::Twine("it is not a NOBITS placeholder of ") +
                llvm::Twine(Bytes.size()) + " bytes");
  // The contents go at the end of the file, at the section's alignment;
  // the section header table stays where it is.
  const uint64_t Align = Header.sh_addralign > 1 ? Header.sh_addralign : 1;
  const uint64_t At = (Object.size() + Align - 1) / Align * Align;
  Header.sh_type = llvm::ELF::SHT_PROGBITS;
  Header.sh_offset = At;
  Object.reserve(At + Bytes.size());
  Object.resize(At, '\0');
  Object.append(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
  std::memcpy(Object.data() + ShOff + *Index * sizeof(Shdr), &Header,
              sizeof Header);
  return llvm::Error::success();
}

} // namespace cuvil
