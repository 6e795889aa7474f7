//===- OffsetAssignment.h - Packing buffers into one arena ------*- C++ -*-===//
#ifndef CUVIL_PLANNER_OFFSETASSIGNMENT_H
#define CUVIL_PLANNER_OFFSETASSIGNMENT_H

#include "planner/MemoryPlan.h"

#include <string>
#include <utility>
#include <vector>

namespace cuvil {

/// Banks of a region, for counting operand pairs that share one.
struct BankModel {
  int64_t Count = 1;    ///< Number of banks; 1: no bank structure.
  int64_t Granule = 0;  ///< Bytes of consecutive addresses in one bank
                        ///< (contiguous: bank size; interleaved: stride).
  int64_t Capacity = 0; ///< Bytes the region holds (bank-aware limit).
  bool enabled() const { return Count > 1 && Granule > 0; }
  /// Bitmask of the banks [Offset, Offset + Size) touches (Count <= 64).
  uint64_t banks(int64_t Offset, int64_t Size) const;
};

/// Result of packing one arena.
struct Packing {
  std::vector<int64_t> Offsets; ///< Per buffer, in the input order.
  int64_t Size = 0;
  std::string Strategy;
  int64_t SameBankPairs = -1;
};

/// Packs buffers (Size and live range [First, Last] used; sizes already
/// aligned) with every strategy and returns the smallest packing; ties go
/// to fewer same-bank pairs, then to the first strategy. Partners lists
/// pairs of buffer indices one kernel streams together; with banks, a
/// bank-aware packing within Banks.Capacity wins if it leaves fewer
/// same-bank pairs.
Packing packArena(const std::vector<ArenaBuffer> &Buffers,
                  const std::vector<std::pair<size_t, size_t>> &Partners,
                  const BankModel &Banks);

/// Total of the buffers' bytes (Bytes, or the aligned Size when Padded)
/// live at each step 0..max Last: linear in buffers plus steps. With
/// branch conditions (ArenaBuffer::RunsWhen), the largest total any one
/// run has at that step: times 2^conditions, up to 10 conditions (beyond,
/// every branch counts at once).
std::vector<int64_t> liveTotals(const std::vector<ArenaBuffer> &Buffers,
                                bool Padded);

/// Same-bank partner pairs of a packing.
int64_t
countSameBankPairs(const std::vector<ArenaBuffer> &Buffers,
                   const std::vector<int64_t> &Offsets,
                   const std::vector<std::pair<size_t, size_t>> &Partners,
                   const BankModel &Banks);

} // namespace cuvil

#endif
