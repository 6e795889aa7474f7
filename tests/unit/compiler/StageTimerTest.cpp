//===- StageTimerTest.cpp - -v, --time-passes and the progress line -------===//
#include "ir/StageTimer.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace cuvil;

TEST(StageTimer, VerboseLinesAndTableListEveryStage) {
  std::ostringstream Verbose;
  StageTimer::Options O;
  O.Verbose = &Verbose;
  StageTimer T(O);
  T.begin("import");
  T.begin("fold-constants");
  T.begin("emit");
  T.finish();
  T.finish(); // a second finish ends nothing
  ASSERT_EQ(T.stages().size(), 3u);
  EXPECT_EQ(T.stages()[0].Name, "import");
  EXPECT_EQ(T.stages()[2].Name, "emit");
  // One line per stage, in the order they ran, as each ends.
  std::string V = Verbose.str();
  size_t Import = V.find("cuvilc: import"), Fold = V.find("fold-constants"),
         Emit = V.find("emit");
  ASSERT_NE(Import, std::string::npos);
  EXPECT_LT(Import, Fold);
  EXPECT_LT(Fold, Emit);
  EXPECT_EQ(std::count(V.begin(), V.end(), '\n'), 3);
  std::string Table = T.table();
  for (const char *Row : {"import", "fold-constants", "emit", "total"})
    EXPECT_NE(Table.find(Row), std::string::npos) << Row;
  EXPECT_NE(Table.find("100.0%"), std::string::npos);
}

TEST(StageTimer, TableIsSlowestFirst) {
  StageTimer T;
  T.begin("quick");
  T.begin("slow");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  T.finish();
  std::string Table = T.table();
  EXPECT_LT(Table.find("slow"), Table.find("quick"));
}

TEST(StageTimer, ProgressLineAfterTheThresholdThenCleared) {
  std::ostringstream Progress;
  StageTimer::Options O;
  O.Progress = &Progress;
  O.ProgressAfter = 0; // always: the line is drawn at each stage
  {
    StageTimer T(O);
    T.expect(4);
    T.begin("import");
    T.begin("plan");
    T.begin("llvm-optimize");
    T.finish();
  }
  std::string P = Progress.str();
  EXPECT_NE(P.find("\rcuvilc: [  0%] import"), std::string::npos) << P;
  EXPECT_NE(P.find("\rcuvilc: [ 50%] llvm-optimize"), std::string::npos) << P;
  // Erased at the end: the last thing written clears the line.
  EXPECT_EQ(P.substr(P.size() - 4), "\r\x1b[K");
}

TEST(StageTimer, NoProgressBeforeTheThreshold) {
  std::ostringstream Progress;
  StageTimer::Options O;
  O.Progress = &Progress;
  O.ProgressAfter = 3600;
  {
    StageTimer T(O);
    T.begin("import");
    T.finish();
  }
  EXPECT_EQ(Progress.str(), "");
}
