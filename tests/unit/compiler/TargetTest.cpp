//===- TargetTest.cpp - targets/*.toml ------------------------------------===//
#include "target/TargetInfo.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace cuvil;

TEST(Target, AllShippedTargetsLoad) {
  auto All = loadAllTargets();
  ASSERT_TRUE(bool(All)) << llvm::toString(All.takeError());
  std::vector<std::string> Names;
  for (const TargetInfo &T : *All)
    Names.push_back(T.Name);
  EXPECT_EQ(Names,
            (std::vector<std::string>{"a78", "host", "host-avx512", "u74-mc"}));
}

TEST(Target, U74MemoryMap) {
  auto T = loadTarget("u74-mc");
  ASSERT_TRUE(bool(T));
  EXPECT_EQ(T->Triple, "riscv64-unknown-elf");
  EXPECT_EQ(T->ABI, "lp64d");
  EXPECT_EQ(T->ArenaRegions, (std::vector<std::string>{"L2LIM", "DDR"}));
  ASSERT_NE(T->region("DDR"), nullptr);
  EXPECT_EQ(T->region("DDR")->Origin, 0x80000000u);
  EXPECT_EQ(T->region("L2LIM")->Length, 0x200000u);
  EXPECT_GE(T->DmaAlign, T->CacheLine);
}

TEST(Target, UnknownTargetListsKnownOnes) {
  auto T = loadTarget("z80");
  ASSERT_FALSE(bool(T));
  EXPECT_EQ(
      llvm::toString(T.takeError()),
      "unknown target 'z80' (known targets: a78, host, host-avx512, u74-mc)");
}

TEST(Target, BrokenFileNamesFileAndKey) {
  std::string P = ::testing::TempDir() + "/broken.toml";
  std::ofstream(P) << "name = \"x\"\n[llvm]\ntriple = \"t\"\n";
  auto T = loadTargetFile(P);
  ASSERT_FALSE(bool(T));
  EXPECT_EQ(llvm::toString(T.takeError()),
            P + ": missing required key 'llvm.cpu'");
}

namespace {

/// A target file whose memory section ends with Regions.
std::string targetWith(const std::string &Dir, const std::string &Name,
                       const std::string &Regions) {
  std::filesystem::create_directories(Dir);
  std::string P = Dir + "/" + Name + ".toml";
  std::ofstream(P)
      << "name = \"" << Name << "\"\n"
      << "[llvm]\ntriple = \"aarch64-none-elf\"\ncpu = \"cortex-a78\"\n"
      << "[memory]\narena_regions = [\"RAM\"]\nweights_region = \"RAM\"\n"
      << Regions;
  return P;
}

const char *RamRegion =
    "[[memory.region]]\nname = \"RAM\"\norigin = 0x40000000\n"
    "length = 0x100000\n";

} // namespace

TEST(Target, OverlappingRegionsAreRefusedWithFileAndLine) {
  std::string P = targetWith(::testing::TempDir() + "/tgt-overlap", "ov",
                             std::string(RamRegion) +
                                 "[[memory.region]]\nname = \"SRAM\"\n"
                                 "origin = 0x400ff000\nlength = 0x2000\n");
  auto T = loadTargetFile(P);
  ASSERT_FALSE(bool(T));
  EXPECT_EQ(llvm::toString(T.takeError()),
            P + ":12: region 'SRAM' [0x400ff000, 0x40101000) overlaps region "
                "'RAM' [0x40000000, 0x40100000) (line 8)");
}

TEST(Target, MisalignedAndDuplicateRegionsAreRefused) {
  std::string Dir = ::testing::TempDir() + "/tgt-misc";
  std::string P = targetWith(Dir, "mis",
                             "[[memory.region]]\nname = \"RAM\"\n"
                             "origin = 0x40000000\nlength = 0x100010\n");
  auto T = loadTargetFile(P);
  ASSERT_FALSE(bool(T));
  EXPECT_EQ(llvm::toString(T.takeError()),
            P + ":8: region 'RAM': origin 0x40000000 and length 0x100010 must "
                "be multiples of memory.dma_align (64)");
  std::string Q = targetWith(Dir, "dup",
                             std::string(RamRegion) +
                                 "[[memory.region]]\nname = \"RAM\"\n"
                                 "origin = 0x80000000\nlength = 0x1000\n");
  auto U = loadTargetFile(Q);
  ASSERT_FALSE(bool(U));
  EXPECT_EQ(llvm::toString(U.takeError()),
            Q + ":12: region 'RAM' is defined twice (first at line 8)");
}

// One broken file does not hide the good ones, and a name two files use
// is refused for both.
TEST(Target, ScanListsGoodFilesAndReportsBrokenOnes) {
  std::string Dir = ::testing::TempDir() + "/tgt-scan";
  std::filesystem::remove_all(Dir);
  targetWith(Dir, "good", RamRegion);
  std::string Bad = Dir + "/bad.toml";
  std::ofstream(Bad) << "name = \"bad\"\n[llvm\n";
  std::string Twin1 = targetWith(Dir, "twin", RamRegion);
  std::string Twin2 = Dir + "/twin2.toml";
  std::filesystem::copy_file(Twin1, Twin2);
  ::setenv("CUVIL_TARGETS_DIR", Dir.c_str(), 1);
  auto S = scanTargets();
  auto Good = loadTarget("good");
  auto Twin = loadTarget("twin");
  ::unsetenv("CUVIL_TARGETS_DIR");
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  ASSERT_EQ(S->Targets.size(), 1u);
  EXPECT_EQ(S->Targets[0].Name, "good");
  ASSERT_EQ(S->Problems.size(), 2u);
  EXPECT_EQ(S->Problems[0].rfind(Bad + ":2: ", 0), 0u) << S->Problems[0];
  EXPECT_EQ(S->Problems[1], Twin2 +
                                ":1: target name 'twin' is already used by " +
                                Twin1 + ":1; rename one of them");
  EXPECT_TRUE(bool(Good)) << llvm::toString(Good.takeError());
  ASSERT_FALSE(bool(Twin));
  EXPECT_EQ(llvm::toString(Twin.takeError()), S->Problems[1]);
}

TEST(Target, PerfPeaksOfTheShippedBoards) {
  auto A78 = loadTarget("a78");
  auto U74 = loadTarget("u74-mc");
  ASSERT_TRUE(bool(A78) && bool(U74));
  EXPECT_EQ(A78->PeakMacsF32, 8);
  EXPECT_EQ(A78->PeakMacsInt8, 32);
  EXPECT_EQ(U74->PeakMacsF32, 1);
  EXPECT_EQ(U74->PeakMacsInt8, 1);
}

TEST(Target, PerfPeaksAreOptionalAndChecked) {
  const std::string Head = "name = \"p\"\n[llvm]\ntriple = "
                           "\"aarch64-none-elf\"\ncpu = \"c\"\n[memory]\n"
                           "arena_regions = [\"RAM\"]\nweights_region = "
                           "\"RAM\"\n[[memory.region]]\nname = \"RAM\"\n"
                           "origin = 0\nlength = 0x1000\n";
  auto None = parseTarget(Head, "p.toml");
  ASSERT_TRUE(bool(None)) << llvm::toString(None.takeError());
  EXPECT_EQ(None->PeakMacsF32, 0);
  EXPECT_EQ(None->PeakMacsInt8, 0);

  // [perf] after the regions: line 12, its key on line 13.
  auto Float =
      parseTarget(Head + "[perf]\npeak_macs_per_cycle_f32 = 2.5\n", "p.toml");
  ASSERT_TRUE(bool(Float)) << llvm::toString(Float.takeError());
  EXPECT_EQ(Float->PeakMacsF32, 2.5);
  EXPECT_EQ(Float->PeakMacsInt8, 0);

  for (const char *Bad : {"0", "-4", "\"fast\"", "1e9"}) {
    auto T = parseTarget(
        Head + "[perf]\npeak_macs_per_cycle_int8 = " + Bad + "\n", "p.toml");
    ASSERT_FALSE(bool(T)) << Bad;
    EXPECT_EQ(llvm::toString(T.takeError()),
              "p.toml:13: perf.peak_macs_per_cycle_int8 must be a positive "
              "number of MACs per cycle")
        << Bad;
  }
}
