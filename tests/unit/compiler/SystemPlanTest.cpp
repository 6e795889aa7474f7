//===- SystemPlanTest.cpp - several models in one memory map --------------===//
#include "emit/SystemPlan.h"

#include "TestTargets.h"

#include <gtest/gtest.h>

using namespace cuvil;

namespace {

SystemModel model(const std::string &Name, int64_t L2, int64_t Ddr = 0,
                  int64_t Weights = 1000) {
  SystemModel M;
  M.Name = Name;
  M.Source = Name + ".json";
  M.Arenas.push_back({"L2LIM", L2});
  if (Ddr)
    M.Arenas.push_back({"DDR", Ddr});
  M.WeightsRegion = "DDR";
  M.WeightsBytes = Weights;
  return M;
}

const SystemPlan::RegionUse *use(const SystemPlan &P, const std::string &R) {
  for (const SystemPlan::RegionUse &U : P.Regions)
    if (U.Region == R)
      return &U;
  return nullptr;
}

std::string error(llvm::Error E) { return llvm::toString(std::move(E)); }

} // namespace

TEST(SystemPlan, ExclusiveModelsShareTheLargestArena) {
  TargetInfo T = test::shippedTarget("u74-mc");
  std::vector<SystemModel> Ms = {model("a", 1200000, 4096), model("b", 1300000),
                                 model("c", 1000)};
  auto G = resolveExclusive(Ms, {{"b", "a"}});
  ASSERT_TRUE(bool(G)) << error(G.takeError());
  auto P = planSystem(Ms, *G, T);
  ASSERT_TRUE(bool(P)) << error(P.takeError());
  const SystemPlan::RegionUse *L2 = use(*P, "L2LIM");
  ASSERT_NE(L2, nullptr);
  // 1300032 (b, aligned to 64) shared with a, plus c's 1024.
  EXPECT_EQ(L2->Bytes, 1300032 + 1024);
  EXPECT_EQ(L2->Unshared, 1200000 + 1300032 + 1024);
  EXPECT_EQ(L2->Capacity, 2u << 20);
  // a alone in DDR: its DDR arena is its own, next to the three blobs.
  const SystemPlan::RegionUse *Ddr = use(*P, "DDR");
  ASSERT_NE(Ddr, nullptr);
  EXPECT_EQ(Ddr->Bytes, 3 * 1024 + 4096);
  int Shared = 0;
  for (const SystemSlot &S : P->Slots)
    if (S.Members.size() > 1) {
      ++Shared;
      EXPECT_EQ(S.Region, "L2LIM");
      EXPECT_EQ(P->Models[S.Owner].Name, "b");
      EXPECT_EQ(S.Group, 0);
    }
  EXPECT_EQ(Shared, 1);

  std::string Script = writeSystemScript(*P, T, {});
  EXPECT_NE(Script.find("KEEP(*(.cuvil.b.arena.L2LIM))"), std::string::npos);
  EXPECT_NE(Script.find("cuvil_a_arena_l2lim = "
                        "__cuvil_exclusive0_arena_L2LIM_start;"),
            std::string::npos);
  EXPECT_NE(Script.find("*(.cuvil.a.arena.L2LIM)"), std::string::npos);
  EXPECT_NE(Script.find("ASSERT(cuvil_a_arena_l2lim_bytes <= 1300032,"),
            std::string::npos);
  // The owner's arena is never discarded, nor a model's own DDR arena.
  EXPECT_EQ(Script.find("*(.cuvil.b.arena.L2LIM)\n"), std::string::npos);
  EXPECT_NE(Script.find("KEEP(*(.cuvil.a.arena.DDR))"), std::string::npos);
}

TEST(SystemPlan, OverflowListsEveryShare) {
  TargetInfo T = test::shippedTarget("u74-mc");
  std::vector<SystemModel> Ms = {model("kws", 1200000), model("vww", 1200000)};
  auto P = planSystem(Ms, {}, T);
  ASSERT_FALSE(bool(P));
  std::string E = error(P.takeError());
  EXPECT_NE(E.find("region 'L2LIM' of target 'u74-mc' holds 2097152 bytes; "
                   "the models need 2400000 there, 302848 too many"),
            std::string::npos)
      << E;
  EXPECT_NE(E.find("kws: arena 1200000 bytes (kws.json)"), std::string::npos)
      << E;
  EXPECT_NE(E.find("vww: arena 1200000 bytes (vww.json)"), std::string::npos);
  EXPECT_NE(E.find("--exclusive A,B"), std::string::npos);
  // Exclusive, they fit.
  auto G = resolveExclusive(Ms, {{"kws", "vww"}});
  ASSERT_TRUE(bool(G));
  EXPECT_TRUE(bool(planSystem(Ms, *G, T)));
}

TEST(SystemPlan, BadGroupsAndModels) {
  TargetInfo T = test::shippedTarget("u74-mc");
  std::vector<SystemModel> Ms = {model("a", 64), model("b", 64),
                                 model("c", 64)};
  auto Err = [&](std::vector<std::vector<std::string>> X) {
    auto G = resolveExclusive(Ms, X);
    return G ? std::string("resolved") : error(G.takeError());
  };
  EXPECT_NE(Err({{"a"}}).find("name two or more models"), std::string::npos);
  EXPECT_NE(Err({{"a", "d"}})
                .find("no model is named 'd' (the reports are "
                      "of a, b, c)"),
            std::string::npos);
  EXPECT_NE(Err({{"a", "a"}}).find("'a' is named twice"), std::string::npos);
  EXPECT_NE(Err({{"a", "b"}, {"b", "c"}}).find("'b' is in two groups"),
            std::string::npos);

  std::vector<SystemModel> Twice = {model("a", 64), model("a", 64)};
  Twice[1].Source = "other.json";
  auto P = planSystem(Twice, {}, T);
  ASSERT_FALSE(bool(P));
  EXPECT_NE(error(P.takeError())
                .find("a.json and other.json are both of a model named 'a'"),
            std::string::npos);

  std::vector<SystemModel> Elsewhere = {model("a", 64)};
  Elsewhere[0].Arenas[0].Region = "RAM";
  P = planSystem(Elsewhere, {}, T);
  ASSERT_FALSE(bool(P));
  EXPECT_NE(error(P.takeError())
                .find("a.json: model 'a' uses region 'RAM', which target "
                      "'u74-mc' does not have"),
            std::string::npos);
}

TEST(SystemPlan, ArenasInInterleavedBanksStartOnABankCycle) {
  TargetInfo T = test::shippedTarget("u74-mc");
  T.Regions[0].Banks = 4;
  T.Regions[0].BankInterleave = 1024;
  std::vector<SystemModel> Ms = {model("a", 100), model("b", 5000)};
  auto P = planSystem(Ms, {}, T);
  ASSERT_TRUE(bool(P)) << error(P.takeError());
  std::string Script = writeSystemScript(*P, T, {});
  EXPECT_NE(Script.find(".cuvil.b.arena.L2LIM (NOLOAD) : ALIGN(4096)"),
            std::string::npos)
      << Script;
  // Each arena may need padding to the next bank cycle.
  EXPECT_EQ(use(*P, "L2LIM")->Bytes, 4096 + 8192);
}
