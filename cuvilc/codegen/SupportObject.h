//===- SupportObject.h - The runtime support code, compiled once -*- C++
//-*-===//
//
// Every model object carries the same runtime support code: the weight
// blob's reader with its SHA-256, CRC-32 and signature check
// (runtime-baremetal/lib/blob.c, digest.c), the A/B weight slots (slots.c)
// and memcpy, memmove and memset (mem.c). It depends on the target's code
// generation, not on the model, yet optimising and generating it was most of
// the LLVM time of a small model. So it is compiled on its own, as one object
// per target, and that object is merged into every model's (ObjectMerge): its
// functions become local symbols of the model object, as they were when
// compiled inside it, but for the mem* helpers, which stay weak definitions.
//
// The object and the stack bound of each of its functions are kept in the
// cache directory (ir/CacheRoot.h), one file per kernel library, target
// code generation settings and cuvilc binary (a cuvilc rebuilt at the same
// path replaces the files of its earlier build); without a cache they are
// made in every run. Either way the model object is byte for byte the same.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_SUPPORTOBJECT_H
#define CUVIL_CODEGEN_SUPPORTOBJECT_H

#include "codegen/StackUsage.h"
#include "ir/StageTimer.h"
#include "target/TargetInfo.h"

#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

#include <set>
#include <string>

namespace cuvil {

/// The runtime helpers the backend itself may call (an llvm.memcpy it does
/// not inline): weak definitions in the model object, so that they resolve
/// inside it without clashing with the firmware's own.
constexpr const char *WeakRuntimeSymbols[] = {"memcpy", "memmove", "memset"};

/// The support functions the entry points call (EntryBuilder, WeightSlots).
/// All of them, so that no support code is compiled into the model's part
/// as well: a static helper reached from both (SHA-256's block function,
/// from the signature check and the blob's digest) would be there twice.
constexpr const char *SupportEntrySymbols[] = {
    "cuvil_blob_open",    "cuvil_slots_reset",
    "cuvil_slots_switch", "cuvil_slots_fell_back",
    "cuvil_slots_sha256", "cuvil_blob_verify_signature"};

struct SupportObject {
  std::string Object; ///< ELF relocatable object for the target.
  /// The worst-case stack of each support function, its callees included.
  OutsideBounds Bounds;
  /// The functions of SupportEntrySymbols it defines: local symbols of the
  /// model object once merged.
  std::set<std::string> Localize;
};

/// T's support object, generated with TM (T's target machine), from the
/// cache when it holds it. Timer, if given, times the generation.
llvm::Expected<SupportObject>
supportObject(const TargetInfo &T, llvm::TargetMachine &TM, StageTimer *Timer);

} // namespace cuvil

#endif
