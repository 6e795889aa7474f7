//===- TargetTest.cpp - targets/*.toml ------------------------------------===//
#include "target/TargetInfo.h"

#include <fstream>
#include <gtest/gtest.h>

using namespace cuvil;

TEST(Target, AllShippedTargetsLoad) {
  auto All = loadAllTargets();
  ASSERT_TRUE(bool(All)) << llvm::toString(All.takeError());
  std::vector<std::string> Names;
  for (const TargetInfo &T : *All)
    Names.push_back(T.Name);
  EXPECT_EQ(Names, (std::vector<std::string>{"a78", "host", "host-avx512", "u74-mc"}));
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
  EXPECT_EQ(llvm::toString(T.takeError()),
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
