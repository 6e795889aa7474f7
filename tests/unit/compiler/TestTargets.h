//===- TestTargets.h - the shipped targets, for unit tests ------*- C++ -*-===//
#ifndef CUVIL_TESTS_UNIT_TESTTARGETS_H
#define CUVIL_TESTS_UNIT_TESTTARGETS_H

#include "target/TargetInfo.h"

#include <gtest/gtest.h>
#include <string>

namespace cuvil::test {

/// The shipped target Name (targets/<Name>.toml). If it does not load, the
/// test fails with the loader's message and gets an empty description.
inline TargetInfo shippedTarget(const std::string &Name) {
  auto T = loadTarget(Name);
  if (!T) {
    ADD_FAILURE() << llvm::toString(T.takeError());
    return TargetInfo{};
  }
  return *T;
}

} // namespace cuvil::test

#endif
