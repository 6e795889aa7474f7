//===- HeaderWriter.cpp ---------------------------------------------------===//
#include "emit/HeaderWriter.h"

#include "codegen/ProfileCode.h"
#include "emit/WeightsBlob.h"
#include "ir/Escape.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>

namespace cuvil {

static std::string upper(std::string S) {
  for (char &C : S)
    C = static_cast<char>(std::toupper(static_cast<unsigned char>(C)));
  return S;
}

/// The --profile part of the header, after the struct.
static void writeProfileApi(std::string &S, const std::string &P,
                            const std::string &N,
                            const HeaderInfo::Profile &Prof,
                            bool DeclareStepName) {
  bool Board = !Prof.Counters[1].empty();
  S += "/* Built with --profile: run_v reads the counters after every step "
       "and\n"
       " * adds their advance since the previous read to m->profile[step]";
  if (Board)
    S += fmt::format(":\n * [0] {}, [1] {}. On AArch64 these are PMCCNTR_EL0 "
                     "and PMU event\n"
                     " * counter 0, which the firmware enables with "
                     "INST_RETIRED (event 0x08)\n"
                     " * before init, as cuvil's boot code does; on RISC-V "
                     "the cycle and\n"
                     " * instret CSRs.",
                     Prof.Counters[0], Prof.Counters[1]);
  else
    S += fmt::format(":\n * [0] {} of CLOCK_MONOTONIC, [1] 0.",
                     Prof.Counters[0]);
  S += fmt::format(
      " init zeroes the table; m->profile_runs\n"
      " * counts the runs. Step i runs the graph node cuvil_{0}_step_name(i),\n"
      " * made of the ONNX nodes cuvil_{0}_step_origins(i) (comma-separated);\n"
      " * both return \"\" out of range. {1}PROFILE_PRINT(m) prints the "
      "table\n"
      " * with runtime-baremetal's cuvil_profile_print (cuvil/profile.h). */\n",
      N, P);
  S += fmt::format("#define {}PROFILE 1\n", P);
  for (unsigned C = 0; C < 2; ++C)
    S += fmt::format("#define {}PROFILE_COUNTER_{} {}\n", P, C,
                     cStringLiteral(Prof.Counters[C]));
  if (DeclareStepName)
    S += fmt::format("const char *cuvil_{}_step_name(int32_t step);\n", N);
  S += fmt::format("const char *cuvil_{}_step_origins(int32_t step);\n", N);
  S += fmt::format("#define {0}PROFILE_PRINT(m) \\\n"
                   "  cuvil_profile_print(\"{1}\", {0}PROFILE_STEPS, \\\n"
                   "                      {0}PROFILE_COUNTER_0, "
                   "{0}PROFILE_COUNTER_1, \\\n"
                   "                      (m)->profile_runs, "
                   "&(m)->profile[0][0], \\\n"
                   "                      cuvil_{1}_step_name)\n\n",
                   P, N);
}

/// The A/B weight slot entry points (codegen/WeightSlots.cpp).
static void writeSlotsApi(std::string &S, const std::string &N) {
  S += fmt::format(
      "/* A/B weights. init_ab: init with the primary blob, or if init "
      "refuses\n"
      " * it, with the fallback (NULL: the embedded blob, where there is "
      "one);\n"
      " * then slot 0 holds the primary and m->slot_status[0] why it was\n"
      " * refused, slot 1 the fallback, active. Returns CUVIL_OK when either\n"
      " * blob was taken, else the fallback's refusal. */\n"
      "int cuvil_{0}_init_ab(cuvil_{0}_t *m, void *const *arenas,\n"
      "                     const void *primary, unsigned long primary_size,\n"
      "                     const void *fallback, unsigned long fallback_size);"
      "\n\n"
      "/* Checks a new blob as init does and also its SHA-256, and only if it\n"
      " * passes makes it the active slot (the other slot's blob stays as it\n"
      " * is): one pointer store, between runs; a run in progress on another\n"
      " * core finishes on the old weights. Call it when no other call on m "
      "is\n"
      " * under way. A refused blob changes nothing; the status says why:\n"
      " * CUVIL_ERR_NOT_INIT, or a CUVIL_ERR_BLOB_* as for init, DIGEST for a\n"
      " * SHA-256 that differs. NULL: the embedded blob, where there is one. "
      "*/\n"
      "int cuvil_{0}_switch_weights(cuvil_{0}_t *m, const void *weights,\n"
      "                             unsigned long weights_size);\n\n"
      "/* Signed weights: init and switch_weights that first check that the\n"
      " * blob (NULL: the embedded one) was signed with key (cuvilc build\n"
      " * --sign-key): an HMAC-SHA-256 of its structure hash and of the\n"
      " * SHA-256 of its data, computed here. A blob not signed with the key\n"
      " * is refused with CUVIL_ERR_BLOB_SIGNATURE and changes nothing; then\n"
      " * the checks of init and switch_weights. */\n"
      "int cuvil_{0}_init_signed(cuvil_{0}_t *m, void *const *arenas,\n"
      "                         const void *weights, unsigned long "
      "weights_size,\n"
      "                         const uint8_t *key, unsigned long key_len);\n"
      "int cuvil_{0}_switch_weights_signed(cuvil_{0}_t *m, const void "
      "*weights,\n"
      "                                    unsigned long weights_size,\n"
      "                                    const uint8_t *key,\n"
      "                                    unsigned long key_len);\n\n"
      "/* The slot in use (0 or 1), or CUVIL_ERR_NULL/NOT_INIT. */\n"
      "int cuvil_{0}_active_slot(const cuvil_{0}_t *m);\n\n"
      "/* The 32-byte SHA-256 of the active weights (as the blob states it:\n"
      " * verified by switch_weights; init verifies the CRC-32 only), or NULL\n"
      " * before a successful init. */\n"
      "const uint8_t *cuvil_{0}_active_sha256(const cuvil_{0}_t *m);\n\n",
      N);
}

std::string writeHeader(const Graph &G, const MemoryPlan &Plan,
                        const TargetInfo &T, const HeaderInfo &Info) {
  const std::string &N = Info.ModelName;
  std::string P = "CUVIL_" + upper(N) + "_";
  std::string Guard = P + "H";
  std::string S;
  auto Line = [&]<typename... Args>(fmt::format_string<Args...> F,
                                    Args &&...A) {
    S += fmt::format(F, std::forward<Args>(A)...);
    S += '\n';
  };

  Line("/* {}.h: C API of the model compiled by cuvilc from {} for target "
       "{}.",
       N, cComment(Info.SourceFile), cComment(T.Name));
  Line(" * Generated file: do not edit. Link {}.o and INCLUDE {}.ld. */", N, N);
  Line("#ifndef {}", Guard);
  Line("#define {}", Guard);
  Line("");
  Line("#include <stdint.h>");
  Line("");
  Line("#ifdef __cplusplus");
  Line("extern \"C\" {{");
  Line("#endif");
  Line("");
  Line("/* Status codes (same values as runtime-baremetal's cuvil/status.h). "
       "*/");
  Line("#ifndef CUVIL_STATUS_CODES_DEFINED");
  Line("#define CUVIL_STATUS_CODES_DEFINED");
  // Read from cuvil/status.h at build time (see cuvilc/CMakeLists.txt).
  for (auto [Name, V] : std::initializer_list<std::pair<const char *, int>>{
#define CUVIL_STATUS(Name, Value) {#Name, Value},
#include "StatusCodes.def"
       })
    if (V)
      Line("#define CUVIL_{} ({})", Name, V);
    else
      Line("#define CUVIL_{} {}", Name, V);
  Line("#endif");
  Line("");
  Line("/* Memory: one activation arena per memory region, placed by {}.ld. */",
       N);
  Line("#define {}NUM_ARENAS {}", P, std::max<size_t>(Plan.Arenas.size(), 1));
  for (size_t A = 0; A < Plan.Arenas.size(); ++A) {
    Line("#define {}ARENA_{}_REGION {}", P, A,
         cStringLiteral(Plan.Arenas[A].Region));
    Line("#define {}ARENA_{}_SIZE {}u", P, A, Plan.Arenas[A].Size);
  }
  Line("#define {}ARENA_SIZE {}u /* all arenas */", P, Plan.arenaSize());
  Line("#define {}ARENA_ALIGN {}u", P, Plan.Alignment);
  Line("#define {}WEIGHTS_SIZE {}u /* blob bytes{} */", P, Info.BlobSize,
       Info.ExternalWeights ? "; external: see the .cuvw file" : "");
  Line("/* Weights: a blob of any weights with this structure hash (the same");
  Line(" * model, target and flags, e.g. retrained) is accepted; the SHA-256 "
       "is");
  Line(" * that of the weights this build wrote. */");
  Line("#define {}STRUCTURE_HASH 0x{:016x}ull", P, Info.StructureHash);
  Line("#define {}WEIGHTS_SHA256 \"{}\"", P, Info.WeightsSha256);
  Line("#define {}BLOB_SCHEMA_VERSION {}u", P, WeightsSchemaVersion);
  if (Info.WeightsSigned)
    Line("#define {}WEIGHTS_SIGNED 1 /* cuvilc build --sign-key: init_signed "
         "checks the tag */",
         P);
  Line("");
  Line("/* Stack: the most bytes below the caller's stack pointer that a call");
  Line(" * of init (or of init_ab, init_signed, switch_weights or");
  Line(" * switch_weights_signed), and of run or run_v, uses (frames of the");
  Line(" * emitted code along its deepest call chain). */");
  for (auto [Entry, Fig] :
       {std::pair{"INIT", &Info.InitStack}, std::pair{"RUN", &Info.RunStack}}) {
    if (Fig->Known) {
      Line("#define {}{}_STACK_BYTES {}u", P, Entry, Fig->Bytes);
      continue;
    }
    // No macro: firmware that relies on the figure must not compile.
    std::string Why = Fig->Reason;
    for (size_t At; (At = Why.find("*/")) != std::string::npos;)
      Why.replace(At, 2, "* /");
    Line("/* {}{}_STACK_BYTES is not stated: {}. */", P, Entry, Why);
  }
  Line("");
  Line("/* Cores: run cuts its convolutions into this many shares (cuvilc "
       "build");
  Line(" * --cores) and runs them through cuvil_team_run (cuvil/team.h): "
       "start");
  Line(" * the team once with cuvil_team_start({}WORKERS). 1: one core. */", P);
  Line("#define {}WORKERS {}", P, Info.Workers);
  Line("");

  const auto &Range = Info.Range;
  if (Range) {
    Line("/* Bounded dimension: built with --dim {}={}..{}, this object runs "
         "every",
         cComment(Range->Name), Range->Lo, Range->Hi);
    Line(" * value in [MIN, MAX]. The arenas and the SHAPE/COUNT/BYTES macros "
         "below");
    Line(" * are for MAX. After init (which chooses MAX), cuvil_{}_set_dims() "
         "sets",
         N);
    Line(" * the value the next runs use; the shape and bytes queries give "
         "each");
    Line(" * input's and output's size at it (dense, row-major). */");
    Line("#define {}NUM_DIMS 1", P);
    Line("#define {}DIM_0_NAME {}", P, cStringLiteral(Range->Name));
    Line("#define {}DIM_0_MIN {}", P, Range->Lo);
    Line("#define {}DIM_0_MAX {}", P, Range->Hi);
    Line("");
  }
  auto Tensors = [&](const char *Kind, const std::vector<Value *> &Vs,
                     const std::vector<bool> *Read,
                     const std::vector<bool> *Optional) {
    std::string K = upper(Kind);
    Line("#define {}NUM_{}S {}", P, K, Vs.size());
    std::vector<std::string> Bytes, Reads, Optionals;
    for (size_t I = 0; I < Vs.size(); ++I) {
      const Value *V = Vs[I];
      std::string Q = fmt::format("{}{}_{}_", P, K, I);
      Line("/* {} {}: '{}' */", Kind, I, cComment(V->name()));
      if (Range) {
        const auto &Dims = std::string(Kind) == "input" ? Range->InputDims[I]
                                                        : Range->OutputDims[I];
        Line("/* shape [{}] for {} in [{}, {}] */",
             cComment(fmt::format("{}", fmt::join(Dims, ", "))),
             cComment(Range->Name), Range->Lo, Range->Hi);
      }
      if (!Read) // an output: its shape may depend on a branch
        for (const BranchShapedOutput &O : Info.ShapedOutputs)
          if (O.Output == I)
            Line("/* its shape is [{}] when the If's condition '{}' holds, "
                 "[{}] otherwise: cuvil_{}_output_shape() after a run; SHAPE "
                 "and BYTES are the larger */",
                 fmt::join(O.ThenShape, ", "), cComment(O.Cond->name()),
                 fmt::join(O.ElseShape, ", "), N);
      Line("#define {}NAME {}", Q, cStringLiteral(V->name()));
      Line("#define {}RANK {}", Q, V->rank());
      Line("#define {}SHAPE {{{}}}", Q,
           V->rank() ? fmt::format("{}", fmt::join(V->shape(), ", ")) : "1");
      Line("#define {}COUNT {}u", Q, V->numElements());
      Line("#define {}BYTES {}u", Q, V->byteSize());
      Line("#define {}TYPE {}", Q, dtypeCType(V->dtype()));
      Bytes.push_back(std::to_string(V->byteSize()) + "u");
      if (Read) {
        // 0: no kernel reads the input (any data, even NULL, will do).
        bool R = I >= Read->size() || (*Read)[I];
        Line("#define {}READ {}", Q, R ? 1 : 0);
        Reads.push_back(R ? "1" : "0");
      }
      if (Optional) {
        // 1: run takes NULL for it, the caller leaving it out.
        bool O = I < Optional->size() && (*Optional)[I];
        Line("#define {}OPTIONAL {}", Q, O ? 1 : 0);
        Optionals.push_back(O ? "1" : "0");
      }
    }
    Line("#define {}{}_BYTES_LIST {{{}}}", P, K,
         Bytes.empty() ? "0" : fmt::format("{}", fmt::join(Bytes, ", ")));
    if (Read)
      Line("#define {}{}_READ_LIST {{{}}}", P, K,
           Reads.empty() ? "0" : fmt::format("{}", fmt::join(Reads, ", ")));
    if (Optional)
      Line("#define {}{}_OPTIONAL_LIST {{{}}}", P, K,
           Optionals.empty() ? "0"
                             : fmt::format("{}", fmt::join(Optionals, ", ")));
    Line("");
  };
  Tensors("input", G.inputs(), &Info.InputsRead, &Info.InputsOptional);
  Tensors("output", G.outputs(), nullptr, nullptr);
  if (!Info.LoopBounds.empty()) {
    Line("/* Loops built for at most a number of iterations (--loop-bound): "
         "run returns CUVIL_ERR_LOOP_BOUND when one would run more. */");
    Line("#define {}LOOP_BOUNDS 1", P);
    Line("");
  }
  if (!Info.ShapedOutputs.empty()) {
    Line("/* Outputs whose shape the branch run takes picks: "
         "cuvil_{}_output_shape(). */",
         N);
    Line("#define {}OUTPUT_SHAPES_VARY 1", P);
    Line("");
  }

  if (Info.Profiled) // the struct's table needs the count
    Line("#define {}PROFILE_STEPS {}", P,
         profileRows(Info.Profiled->Steps.size()));
  Line("/* One model instance. Caller-owned; fill it with {}_init(). */",
       "cuvil_" + N);
  Line("typedef struct cuvil_{} {{", N);
  Line("  const void *weights;  /* verified weight data block */");
  Line("  uint32_t state;       /* set by a successful init */");
  Line("  void *arenas[{}NUM_ARENAS]; /* activation arenas in use */", P);
  if (Info.Checked)
    Line("  int32_t bounds_step;  /* step whose bounds check failed, or -1 */");
  if (Info.Profiled) {
    Line("  uint64_t profile_runs; /* runs since init */");
    Line("  uint64_t profile[{}PROFILE_STEPS][2]; /* per step, summed over "
         "runs */",
         P);
  }
  if (Range)
    Line("  int64_t dims[{}NUM_DIMS]; /* value of the next runs (set_dims) */",
         P);
  if (!Info.ShapedOutputs.empty())
    Line("  uint8_t output_arm[{}NUM_OUTPUTS]; /* per output, the branch the "
         "last run took */",
         P);
  Line(
      "  /* A/B weight slots (init_ab, switch_weights): each slot's blob, its");
  Line("   * size and the status of its last check, and the slot in use. */");
  Line("  const void *slot_blob[2];");
  Line("  uint64_t slot_size[2];");
  Line("  int32_t slot_status[2];");
  Line("  uint32_t active_slot;");
  Line("}} cuvil_{}_t;", N);
  Line("");
  if (Info.Profiled)
    writeProfileApi(S, P, N, *Info.Profiled, !Info.Checked);
  if (Info.Checked) {
    Line(
        "/* Built with --checked: after every step run checks the canaries in");
    Line(" * the guard gaps after the live arena buffers; on a violation it");
    Line(
        " * returns CUVIL_ERR_BOUNDS with m->bounds_step set to the step, and");
    Line(" * cuvil_{}_step_name(step) names its ONNX node (\"\" out of range). "
         "*/",
         N);
    Line("#define {}CHECKED 1", P);
    Line("const char *cuvil_{}_step_name(int32_t step);", N);
    Line("");
  }
  Line("/* Prepares m. arenas: NULL for the static arenas, or an array of");
  Line(
      " * {}NUM_ARENAS pointers, each NULL (static) or to ARENA_<i>_SIZE bytes",
      P);
  Line(" * aligned to {}ARENA_ALIGN. weights/weights_size: {}", P,
       Info.ExternalWeights
           ? "the .cuvw blob (required: this model was built with external "
             "weights), aligned to ARENA_ALIGN."
           : "NULL/0 for the embedded blob, or a replacement .cuvw blob.");
  Line(" * The blob is checked (identifier, schema version, structure hash,");
  Line(" * bounds, alignment, size, CRC-32 of the data), and the arenas");
  Line(
      " * (alignment, address range, no overlap with each other or the blob).");
  Line(" * Returns CUVIL_OK or a negative CUVIL_ERR_*: for the blob IDENT (not "
       "a");
  Line(" * blob), FORMAT (malformed), VERSION (another schema version),");
  Line(" * STRUCTURE (built for another structure), ALIGN, SHORT/SIZE (too");
  Line(" * small), CHECKSUM (corrupted). */");
  Line("int cuvil_{}_init(cuvil_{}_t *m, void *const *arenas, const void "
       "*weights,",
       N, N);
  Line("                  unsigned long weights_size);");
  Line("");
  writeSlotsApi(S, N);
  if (Range) {
    Line("/* Sets the bounded dimension for the next runs: dims[0] is its "
         "value.");
    Line(" * Returns CUVIL_OK, CUVIL_ERR_NULL, or CUVIL_ERR_DIM_RANGE "
         "(outside");
    Line(" * [DIM_0_MIN, DIM_0_MAX]: the value in use stays). A run also "
         "refuses");
    Line(" * a value outside the range (CUVIL_ERR_DIM_RANGE), which arenas "
         "sized");
    Line(" * for MAX could not hold. */");
    Line("int cuvil_{}_set_dims(cuvil_{}_t *m, const int64_t *dims);", N, N);
    Line("/* Input or output `index` at the value in use: shape receives its");
    Line(" * dimensions (RANK of them); returns the rank, or CUVIL_ERR_NULL /");
    Line(" * CUVIL_ERR_INDEX. The bytes: 0 for a bad instance or index. */");
    for (const char *K : {"input", "output"}) {
      Line("int cuvil_{}_{}_shape(const cuvil_{}_t *m, unsigned index, "
           "int64_t *shape);",
           N, K, N);
      Line("unsigned long cuvil_{}_{}_bytes(const cuvil_{}_t *m, unsigned "
           "index);",
           N, K, N);
    }
    Line("");
  }
  if (!Info.ShapedOutputs.empty()) {
    Line("/* Output `index` as the last run wrote it (its shape may depend on "
         "the");
    Line(" * branch of an If): shape receives its dimensions; returns the "
         "rank, or");
    Line(" * CUVIL_ERR_NULL / CUVIL_ERR_INDEX. The bytes: 0 for a bad "
         "instance or index. */");
    Line("int cuvil_{}_output_shape(const cuvil_{}_t *m, unsigned index, "
         "int64_t *shape);",
         N, N);
    Line("unsigned long cuvil_{}_output_bytes(const cuvil_{}_t *m, unsigned "
         "index);",
         N, N);
    Line("");
  }
  std::vector<std::string> Params;
  std::set<std::string> Used = {"m"};
  auto ParamName = [&](const Value *V, const char *Fallback, size_t I) {
    // The tensor's name made a C name, when that is safe (not a keyword, a
    // reserved name, one of ours or of our macros, nor taken already);
    // otherwise a neutral one.
    std::string Id = cIdentifier(V->name());
    for (unsigned Try = 0; !isSafeCIdentifier(Id) || Used.count(Id); ++Try)
      Id = Try ? fmt::format("{}{}_{}", Fallback, I, Try)
               : fmt::format("{}{}", Fallback, I);
    Used.insert(Id);
    return Id;
  };
  std::vector<std::string> Optional; // the inputs run takes NULL for
  for (size_t I = 0; I < G.inputs().size(); ++I) {
    std::string Id = ParamName(G.inputs()[I], "input", I);
    Params.push_back(
        fmt::format("const {} *{}", dtypeCType(G.inputs()[I]->dtype()), Id));
    if (I < Info.InputsOptional.size() && Info.InputsOptional[I])
      Optional.push_back(Id);
  }
  for (size_t I = 0; I < G.outputs().size(); ++I)
    Params.push_back(fmt::format("{} *{}", dtypeCType(G.outputs()[I]->dtype()),
                                 ParamName(G.outputs()[I], "output", I)));
  Line("/* Runs one inference. Buffers are dense, row-major; outputs must not");
  const char *Returns = Info.LoopBounds.empty()
                            ? "Returns CUVIL_OK, or CUVIL_ERR_NOT_INIT."
                            : "Returns CUVIL_OK, CUVIL_ERR_NOT_INIT, or";
  if (Optional.empty()) {
    Line(" * overlap inputs. {}{}", Returns,
         Info.LoopBounds.empty() ? " */" : "");
  } else {
    Line(" * overlap inputs. Optional inputs ({}) may be NULL: the caller",
         fmt::join(Optional, ", "));
    Line(" * leaves them out (None in PyTorch). {}{}", Returns,
         Info.LoopBounds.empty() ? " */" : "");
  }
  if (!Info.LoopBounds.empty()) {
    // The loops built for at most K iterations (--loop-bound): a run that
    // needs more stops, and its outputs are not to be used.
    Line(" * CUVIL_ERR_LOOP_BOUND when a loop would run past the bound it was");
    Line(" * built for (its outputs are then not written):");
    for (size_t I = 0; I < Info.LoopBounds.size(); ++I)
      Line(" *   Loop '{}': at most {} iterations{}",
           cComment(Info.LoopBounds[I].first), Info.LoopBounds[I].second,
           I + 1 == Info.LoopBounds.size() ? ". */" : ";");
  }
  Line("int cuvil_{}_run(cuvil_{}_t *m, {});", N, N, fmt::join(Params, ", "));
  Line("");
  Line("/* The same, with arrays of {}NUM_INPUTS input and {}NUM_OUTPUTS", P,
       P);
  Line(" * output pointers. */");
  Line("int cuvil_{}_run_v(cuvil_{}_t *m, const void *const *inputs,", N, N);
  Line("                   void *const *outputs);");
  Line("");
  if (!Info.FirmwareKernels.empty()) {
    Line("/* Kernels the firmware provides: the custom ops of the model");
    Line(" * (--custom-ops) call these functions, which {}.o leaves", N);
    Line(" * undefined. Define each with exactly this prototype (include");
    Line(" * this header where you define them, so the compiler checks).");
    Line(" * Buffers are dense and row-major; outputs may alias input 0 when");
    Line(" * the op is in_place. */");
    for (const std::string &Proto : Info.FirmwareKernels)
      Line("{};", Proto);
    Line("");
  }
  Line("#ifdef __cplusplus");
  Line("}}");
  Line("#endif");
  Line("");
  Line("#endif /* {} */", Guard);
  return S;
}

} // namespace cuvil
