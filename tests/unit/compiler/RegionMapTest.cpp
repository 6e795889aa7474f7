//===- RegionMapTest.cpp - firmware names of the target's regions ---------===//
#include "target/RegionMap.h"

#include "TestTargets.h"

#include <gtest/gtest.h>

using namespace cuvil;

namespace {

std::vector<ScriptRegion> parse(std::string_view Text) {
  auto R = parseMemoryRegions(Text, "fw.ld");
  EXPECT_TRUE(bool(R)) << llvm::toString(R.takeError());
  return R ? *R : std::vector<ScriptRegion>{};
}

std::string parseError(std::string_view Text) {
  auto R = parseMemoryRegions(Text, "fw.ld");
  if (R)
    return "parsed";
  return llvm::toString(R.takeError());
}

} // namespace

TEST(RegionMap, MemoryBlockAsGnuLdWritesIt) {
  auto R = parse("/* a board */\nOUTPUT_ARCH(riscv)\nMEMORY\n{\n"
                 "  FLASH (rx) : ORIGIN = 0x20000000, LENGTH = 256M\n"
                 "  ram (!rx) : org = 010, len = 4K /* octal origin */\n"
                 "  TCM:o=0,l=64k+0x100\n"
                 "}\nSECTIONS { .text : { *(.text) } > FLASH }\n");
  ASSERT_EQ(R.size(), 3u);
  EXPECT_EQ(R[0].Name, "FLASH");
  EXPECT_EQ(R[0].Origin, 0x20000000u);
  EXPECT_EQ(R[0].Length, 256u << 20);
  EXPECT_EQ(R[0].Line, 5);
  EXPECT_EQ(R[1].Name, "ram");
  EXPECT_EQ(R[1].Origin, 8u);
  EXPECT_EQ(R[1].Length, 4096u);
  EXPECT_EQ(R[1].Line, 6);
  EXPECT_EQ(R[2].Name, "TCM");
  EXPECT_EQ(R[2].Length, 65536u + 256u);
}

TEST(RegionMap, ScriptsItCannotReadAreErrors) {
  EXPECT_EQ(parseError("SECTIONS {}"), "fw.ld: no MEMORY block with regions");
  EXPECT_EQ(parseError("MEMORY { RAM : ORIGIN = 0x0, LENGTH = 1M"),
            "fw.ld: MEMORY block without its closing '}'");
  EXPECT_EQ(parseError("MEMORY {\n RAM : ORIGIN = 0, LENGTH = 1M\n"
                       " RAM : ORIGIN = 1M, LENGTH = 1M }"),
            "fw.ld:3: MEMORY region 'RAM' is declared twice");
  EXPECT_EQ(parseError("MEMORY {\n RAM ORIGIN = 0, LENGTH = 1M }"),
            "fw.ld:2: MEMORY: expected ':' (at 'ORIGIN')");
  EXPECT_EQ(parseError("MEMORY { RAM : ORIGIN = 0x, LENGTH = 1M }"),
            "fw.ld:1: MEMORY: cuvil reads numbers (with K, M or G) joined by + "
            "and - here, not symbols or functions; give the region names "
            "with --region-map instead (at '0x')");
  EXPECT_NE(parseError("MEMORY { R : ORIGIN = 0xffffffffffffffff + 1, "
                       "LENGTH = 1 }")
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(parseError("MEMORY { R : ORIGIN = 0, LENGTH = 1 } /* open")
                .find("unterminated comment"),
            std::string::npos);
}

TEST(RegionMap, ScriptMatchesRegionsByAddressAndCutsThem) {
  TargetInfo T = test::shippedTarget("u74-mc");
  // regionMapFromScript reads a file: write one.
  std::string Path = ::testing::TempDir() + "/cuvil-regionmap-test.ld";
  {
    FILE *F = std::fopen(Path.c_str(), "w");
    ASSERT_NE(F, nullptr);
    std::fputs("MEMORY {\n  sram : ORIGIN = 0x08000000, LENGTH = 64K\n"
               "  ram  : ORIGIN = 0x80100000, LENGTH = 16M\n}\n",
               F);
    std::fclose(F);
  }
  auto M = regionMapFromScript(Path, T);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(M->describe(), "DDR=ram, L2LIM=sram");
  EXPECT_EQ(M->firmwareName("DDR"), "ram");
  EXPECT_EQ(M->firmwareName("FLASH"), "FLASH"); // not in the firmware
  EXPECT_EQ(T.region("L2LIM")->Length, 64 * 1024);
  EXPECT_EQ(T.region("DDR")->Origin, 0x80100000);
  EXPECT_EQ(T.region("DDR")->Length, 16 << 20);
  EXPECT_EQ(M->targetName(T, "ram"), "DDR");
  EXPECT_EQ(M->targetName(T, "DDR"), "DDR");
  EXPECT_EQ(M->targetName(T, "rom"), "");
  std::string Msg = unmappedMessage(*M, T, "FLASH");
  EXPECT_NE(Msg.find("no MEMORY region overlaps target region 'FLASH'"),
            std::string::npos)
      << Msg;
  std::remove(Path.c_str());
}

TEST(RegionMap, CommandLinePairs) {
  TargetInfo T = test::shippedTarget("u74-mc");
  auto M = parseRegionMap({"DDR=RAM", "L2LIM=RAM"}, T);
  ASSERT_TRUE(bool(M));
  // Two target regions in one firmware region: the firmware name is
  // ambiguous as an option value.
  EXPECT_EQ(M->targetName(T, "RAM"), "");
  EXPECT_EQ(M->firmwareName("L2LIM"), "RAM");
  auto Bad = parseRegionMap({"DDR=1RAM"}, T);
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("not a linker-script"),
            std::string::npos);
}
