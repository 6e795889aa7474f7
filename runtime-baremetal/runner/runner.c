/*
 * cuvil end-to-end runner: runs one compiled model on the inputs in
 * input_<i>.bin and writes its outputs to out_<i>.bin (raw bytes, as the
 * model's header sizes them), in the current directory.
 *
 * The model is compiled with `cuvilc build ... --name model`, so this file
 * includes the generated "model.h". tests/e2e/run_e2e.py and `cuvilc run`
 * (cuvilc/runner/BoardRunner.cpp) build it:
 *   host (-DCUVIL_HOST): against the C library, files through stdio;
 *   targets: freestanding, with the cuvil runtime; files through semihosting,
 *            relative to QEMU's working directory; counters read around the
 *            inference (deterministic under `qemu -icount shift=0`).
 * On success it prints `cuvil: run ok cycles=N instret=N` (targets) or
 * `cuvil: run ok` (host) and returns 0; on failure it prints
 * `cuvil: error: ...` and returns 1.
 *
 * -DCUVIL_RUNNER_ENTRY=NAME (boards): no main(); the runner is the function
 * `int NAME(const char *dir)`, whose files are in `dir` (a prefix such as
 * "case/", relative to QEMU's working directory). Several runners, each
 * compiled against its own model's header (-DCUVIL_RUNNER_MODEL_HEADER),
 * then link into one image that calls them in turn:
 * tests/conformance/board_batches.py runs the ONNX backend tests so, many
 * models per QEMU boot.
 *
 * -DCUVIL_RUNNER_WEIGHTS: init takes the weight blob in weights.cuvw instead
 * of the embedded one (external weights, or a weight-only update; boards
 * also print what verifying it costs: tests/e2e/weight_update.py).
 * -DCUVIL_RUNNER_KEY (with CUVIL_RUNNER_WEIGHTS): init_signed with the key
 * in key.bin takes it, refusing a blob not signed with that key.
 *
 * Multicore builds (CUVIL_MODEL_WORKERS > 1, boards): the runner starts the
 * team first and prints `cuvil: team cores=N`. With
 * -DCUVIL_RUNNER_TEAM_MEASURE it starts no team and runs every share on one
 * core, counting them (cuvil_team_measure): it then also prints
 * `cuvil: team shares=S sum=N max=M members=a,b,...` (cuvil_team_figures_t),
 * from which the critical path of a run on S cores is instret - sum + max
 * (bench/run_bench.py).
 *
 * Stack check: init and run_v are called on a painted stack (boards: the
 * boot stack from __cuvil_stack_bottom up to the caller's stack pointer;
 * host: a thread on a painted static stack), and the deepest byte they
 * changed gives the stack they used below the caller's stack pointer. The
 * runner prints `cuvil: stack init|run stated=N measured=M` and fails when a
 * measured figure exceeds the header's CUVIL_MODEL_*_STACK_BYTES.
 */
#include <stddef.h>
#include <stdint.h>

/* -DCUVIL_RUNNER_MODEL_HEADER='"path"': the model's header by another name. */
#ifdef CUVIL_RUNNER_MODEL_HEADER
#include CUVIL_RUNNER_MODEL_HEADER
#else
#include "model.h"
#endif

#ifdef CUVIL_HOST
#include <pthread.h>
#include <stdio.h>
#define say printf
#else
#include "cuvil/blob.h"
#include "cuvil/port.h"
#include "cuvil/profile.h"
#define say cuvil_printf
#if CUVIL_MODEL_WORKERS > 1
#include "cuvil/team.h"
#define CUVIL_RUNNER_TEAM 1
#endif
#endif

/* Every input and output buffer starts on this boundary, as a DMA engine or a
 * vector kernel of the target would want. */
#define IO_ALIGN 64

/* Inputs and outputs are carved from one static pool, which serves any number
 * of them (C cannot declare one static array per entry of the header's byte
 * lists). The default holds every test model's I/O; main() checks the fit. */
#ifndef CUVIL_RUNNER_IO_POOL_BYTES
#define CUVIL_RUNNER_IO_POOL_BYTES (1ul << 20)
#endif

/* For a model without inputs (all constants), the header's list is {0}: C
 * has no empty initializers. Arrays indexed by input are sized to match. */
#define INPUT_SLOTS (CUVIL_MODEL_NUM_INPUTS ? CUVIL_MODEL_NUM_INPUTS : 1)
static const unsigned long input_bytes[] = CUVIL_MODEL_INPUT_BYTES_LIST;
/* Inputs the model never reads (CastLike's `like`, an input no node uses)
 * are not loaded: their data may not even match the declared shape. */
static const unsigned char input_read[] = CUVIL_MODEL_INPUT_READ_LIST;
/* Optional inputs (ONNX optional types the model tests for presence): an
 * empty input_<i>.bin leaves the input out, and run gets NULL for it. */
static const unsigned char input_optional[] = CUVIL_MODEL_INPUT_OPTIONAL_LIST;
static const unsigned long output_bytes[] = CUVIL_MODEL_OUTPUT_BYTES_LIST;
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(COUNT(input_bytes) == INPUT_SLOTS,
               "CUVIL_MODEL_INPUT_BYTES_LIST must have one entry per input");
_Static_assert(COUNT(output_bytes) == CUVIL_MODEL_NUM_OUTPUTS,
               "CUVIL_MODEL_OUTPUT_BYTES_LIST must have one entry per output");

static unsigned char io_pool[CUVIL_RUNNER_IO_POOL_BYTES]
    __attribute__((aligned(IO_ALIGN)));
static cuvil_model_t model;

#ifdef CUVIL_HOST
/* stdio versions of the runtime's semihosting file calls: the number of bytes
 * transferred, or -1. As with semihosting, reading takes the whole file,
 * which must fit in `size` bytes. */
static long read_file(const char *path, void *buf, size_t size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  size_t got = fread(buf, 1, size, f);
  int at_end = fgetc(f) == EOF;
  fclose(f);
  return at_end ? (long)got : -1;
}

static long write_file(const char *path, const void *buf, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t put = fwrite(buf, 1, size, f);
  int closed = fclose(f) == 0;
  return put == size && closed ? (long)put : -1;
}
#else
#define read_file cuvil_semihost_read_file
#define write_file cuvil_semihost_write_file
#endif

static unsigned long align_up(unsigned long n) {
  return (n + IO_ALIGN - 1) / IO_ALIGN * IO_ALIGN;
}

/* Room for a file's path: the directory prefix and a file name. */
#define PATH_BYTES 256

/* The directory the files are in ("" : the working directory). */
static const char *file_dir = "";

/* Writes file_dir followed by `file` into `path` (PATH_BYTES); NULL (and a
 * message) if it does not fit. */
static const char *in_dir(char path[PATH_BYTES], const char *file) {
  const char *parts[] = {file_dir, file};
  char *p = path;
  for (unsigned k = 0; k < 2; ++k)
    for (const char *s = parts[k]; *s; ++s) {
      if (p == path + PATH_BYTES - 1) {
        say("cuvil: error: the path of %s in %s is longer than %d bytes\n",
            file, file_dir, PATH_BYTES - 1);
        return NULL;
      }
      *p++ = *s;
    }
  *p = '\0';
  return path;
}

/* The path of "<stem>_<index>.bin" in file_dir, written into `path`, or
 * NULL (and a message) if it does not fit. */
static const char *file_name(char path[PATH_BYTES], const char *stem,
                             unsigned index) {
  char digits[10];
  int n = 0;
  do {
    digits[n++] = (char)('0' + index % 10);
    index /= 10;
  } while (index);
  char name[32];
  char *p = name;
  while (*stem)
    *p++ = *stem++;
  *p++ = '_';
  while (n)
    *p++ = digits[--n];
  for (const char *ext = ".bin"; *ext;)
    *p++ = *ext++;
  *p = '\0';
  return in_dir(path, name);
}

/* The stack the entry points run on is painted with this byte first. */
#define STACK_PAINT 0xa5u

#ifdef CUVIL_HOST
/* The host runs the model in a thread on this stack, so that all of it can
 * be painted. */
#define HOST_STACK_BYTES (1ul << 20)
static unsigned char host_stack[HOST_STACK_BYTES] __attribute__((aligned(64)));
#define STACK_BOTTOM host_stack
#else
extern unsigned char __cuvil_stack_bottom[]; /* from the base linker script */
#define STACK_BOTTOM __cuvil_stack_bottom
#endif

/* The stack pointer. In a function without variable-sized locals it stays
 * put after the prologue: its value is the stack pointer at a call. */
static inline __attribute__((always_inline)) uintptr_t stack_pointer(void) {
  uintptr_t sp;
#if defined(__riscv)
  __asm__ volatile("mv %0, sp" : "=r"(sp));
#elif defined(__aarch64__)
  __asm__ volatile("mov %0, sp" : "=r"(sp));
#elif defined(__x86_64__)
  __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
#else
#error "stack_pointer: unknown architecture"
#endif
  return sp;
}

/* Paints the stack below sp (volatile stores: no memset call, which would
 * itself use the stack being painted). */
static inline __attribute__((always_inline)) void paint_below(uintptr_t sp) {
  for (volatile unsigned char *p = STACK_BOTTOM; (uintptr_t)p < sp; ++p)
    *p = STACK_PAINT;
}

/* Bytes below sp that are no longer paint: the deepest use since painting. */
static inline __attribute__((always_inline)) unsigned long
used_below(uintptr_t sp) {
  const volatile unsigned char *p = STACK_BOTTOM;
  while ((uintptr_t)p < sp && *p == STACK_PAINT)
    ++p;
  return (unsigned long)(sp - (uintptr_t)p);
}

static unsigned long init_stack_used, run_stack_used;
#ifndef CUVIL_HOST
static uint64_t run_cycles, run_instret;
#endif

#ifdef CUVIL_RUNNER_WEIGHTS
/* -DCUVIL_RUNNER_WEIGHTS: init takes the blob in weights.cuvw (a model built
 * with external weights, or other weights of the same structure) instead of
 * the embedded one. The buffer holds the model's own blob and more. */
#ifndef CUVIL_RUNNER_WEIGHTS_BYTES
#define CUVIL_RUNNER_WEIGHTS_BYTES (CUVIL_MODEL_WEIGHTS_SIZE + 65536ul)
#endif
static unsigned char weights[CUVIL_RUNNER_WEIGHTS_BYTES]
    __attribute__((aligned(CUVIL_MODEL_ARENA_ALIGN)));
static long weights_size;
#define INIT_WEIGHTS weights, (unsigned long)weights_size
#else
/* NULL: the embedded weights. */
#define INIT_WEIGHTS NULL, 0
#endif

#ifdef CUVIL_RUNNER_KEY
static uint8_t key[256];
static long key_len;
#define INIT_NAME "cuvil_model_init_signed"
#else
#define INIT_NAME "cuvil_model_init"
#endif

static __attribute__((noinline)) int measured_init(void) {
  uintptr_t sp = stack_pointer();
  paint_below(sp);
  /* NULL: the arena placed by model.ld. */
#ifdef CUVIL_RUNNER_KEY
  int rc = cuvil_model_init_signed(&model, NULL, INIT_WEIGHTS, key,
                                   (unsigned long)key_len);
#else
  int rc = cuvil_model_init(&model, NULL, INIT_WEIGHTS);
#endif
  init_stack_used = used_below(sp);
  return rc;
}

/* The counters are read by leaf functions without a frame: they do not
 * touch the painted stack. */
static __attribute__((noinline)) int measured_run(const void *const *inputs,
                                                  void *const *outputs) {
  uintptr_t sp = stack_pointer();
  paint_below(sp);
#ifndef CUVIL_HOST
  uint64_t cycles = cuvil_port_cycles();
  uint64_t instret = cuvil_port_instret();
#endif
  int rc = cuvil_model_run_v(&model, inputs, outputs);
#ifndef CUVIL_HOST
  run_instret = cuvil_port_instret() - instret;
  run_cycles = cuvil_port_cycles() - cycles;
#endif
  run_stack_used = used_below(sp);
  return rc;
}

#if defined(CUVIL_RUNNER_WEIGHTS) && !defined(CUVIL_HOST)
/* What checking the blob costs, in instructions: the whole check init makes
 * (CRC-32 of the data), and the same with the SHA-256 of the data too
 * (docs/deployment.md quotes these). The result is not judged here: init
 * returns it. */
static void report_verify_cost(void) {
  const uint8_t *data;
  uint64_t instret[2];
  for (unsigned sha = 0; sha < 2; ++sha) {
    uint64_t start = cuvil_port_instret();
    cuvil_blob_open(weights, (uint64_t)weights_size, CUVIL_MODEL_STRUCTURE_HASH,
                    CUVIL_MODEL_ARENA_ALIGN, 0,
                    sha ? CUVIL_BLOB_VERIFY_SHA256 : 0, &data);
    instret[sha] = cuvil_port_instret() - start;
  }
  say("cuvil: verify bytes=%ld crc32 instret=%llu sha256 instret=%llu\n",
      weights_size, (unsigned long long)instret[0],
      (unsigned long long)instret[1]);
}
#endif

#if defined(CUVIL_RUNNER_KEY) && !defined(CUVIL_HOST)
/* What checking the blob's signature costs (cuvil_blob_verify_signature,
 * which init_signed runs before init's checks). */
static void report_signature_cost(void) {
  uint64_t start = cuvil_port_instret();
  cuvil_blob_verify_signature(weights, (uint64_t)weights_size, key,
                              (uint64_t)key_len);
  say("cuvil: verify signature instret=%llu\n",
      (unsigned long long)(cuvil_port_instret() - start));
}
#endif

static int fail_stack(const char *entry) {
  say("cuvil: error: %s used more stack than model.h states\n", entry);
  return 1;
}

static int fail_status(const char *call, int rc) {
  say("cuvil: error: %s returned %d (see CUVIL_ERR_* in model.h)\n", call, rc);
  return 1;
}

#if defined(CUVIL_MODEL_NUM_DIMS) || defined(CUVIL_MODEL_OUTPUT_SHAPES_VARY)
/* Prints each output's shape as cuvil_model_output_shape gives it now (a
 * range's value, or the branch the last run took): `cuvil: output I shape
 * D,D,...`, which cuvilc run reads. */
static int say_output_shapes(void) {
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i) {
    int64_t shape[8];
    int rank = cuvil_model_output_shape(&model, i, shape);
    if (rank < 0 || rank > 8)
      return fail_status("cuvil_model_output_shape", rank);
    say("cuvil: output %u shape", i);
    for (int d = 0; d < rank; ++d)
      say(d ? ",%ld" : " %ld", (long)shape[d]);
    say("\n");
  }
  return 0;
}
#endif

#ifdef CUVIL_MODEL_NUM_DIMS
/* A build for a range of a dimension: dims.bin holds the value of each
 * bounded dimension (int64, little-endian), which the runs use; inputs and
 * outputs are read and written at their sizes for it. */
#define IN_BYTES(i) cuvil_model_input_bytes(&model, (i))
#define OUT_BYTES(i) cuvil_model_output_bytes(&model, (i))

static int set_dims(void) {
  int64_t dims[CUVIL_MODEL_NUM_DIMS];
  char path[PATH_BYTES];
  if (!in_dir(path, "dims.bin"))
    return 1;
  if (read_file(path, dims, sizeof dims) != (long)sizeof dims) {
    say("cuvil: error: cannot read %s: expected %lu bytes\n", path,
        (unsigned long)sizeof dims);
    return 1;
  }
  int rc = cuvil_model_set_dims(&model, dims);
  if (rc != 0)
    return fail_status("cuvil_model_set_dims", rc);
  /* The output shapes at this value, as the caller reads them. */
  return say_output_shapes();
}
#else
#define IN_BYTES(i) input_bytes[i]
#ifdef CUVIL_MODEL_OUTPUT_SHAPES_VARY
/* An output whose shape the branch of an If picks at run time: the run
 * writes the branch's bytes, out_<i>.bin holds those, and its shape is
 * printed after the run. */
#define OUT_BYTES(i) cuvil_model_output_bytes(&model, (i))
#else
#define OUT_BYTES(i) output_bytes[i]
#endif
#endif

static int run_model(void) {
  unsigned long need = 0;
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_INPUTS; ++i)
    need += align_up(input_bytes[i]);
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i)
    need += align_up(output_bytes[i]);
  if (need > sizeof io_pool) {
    say("cuvil: error: the model's inputs and outputs need %lu bytes, the "
        "runner has %lu; rebuild it with -DCUVIL_RUNNER_IO_POOL_BYTES=%lu\n",
        need, (unsigned long)sizeof io_pool, need);
    return 1;
  }

#ifdef CUVIL_RUNNER_WEIGHTS
  char weights_path[PATH_BYTES];
  if (!in_dir(weights_path, "weights.cuvw"))
    return 1;
  weights_size = read_file(weights_path, weights, sizeof weights);
  if (weights_size < 0) {
    say("cuvil: error: cannot read %s (at most %lu bytes)\n", weights_path,
        (unsigned long)sizeof weights);
    return 1;
  }
#ifndef CUVIL_HOST
  report_verify_cost();
#endif
#endif
#ifdef CUVIL_RUNNER_KEY
  char key_path[PATH_BYTES];
  if (!in_dir(key_path, "key.bin"))
    return 1;
  key_len = read_file(key_path, key, sizeof key);
  if (key_len <= 0) {
    say("cuvil: error: cannot read %s (1 to %lu bytes)\n", key_path,
        (unsigned long)sizeof key);
    return 1;
  }
#ifndef CUVIL_HOST
  report_signature_cost();
#endif
#endif
#ifdef CUVIL_RUNNER_TEAM
#ifdef CUVIL_RUNNER_TEAM_MEASURE
  cuvil_team_measure(1);
#else
  say("cuvil: team cores=%d\n", cuvil_team_start(CUVIL_MODEL_WORKERS));
#endif
#endif
  int init_rc = measured_init();
  if (init_rc != 0)
    return fail_status(INIT_NAME, init_rc);
#ifdef CUVIL_MODEL_NUM_DIMS
  if (set_dims() != 0)
    return 1;
#endif

  char name[PATH_BYTES];
  unsigned char *next = io_pool;
  const void *inputs[INPUT_SLOTS];
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_INPUTS; ++i) {
    const char *path = file_name(name, "input", i);
    if (!path)
      return 1;
    inputs[i] = next;
    if (!input_read[i]) {
      next += align_up(input_bytes[i]);
      continue;
    }
    long got = read_file(path, next, IN_BYTES(i));
    if (got == 0 && input_optional[i] && IN_BYTES(i) != 0) {
      say("cuvil: input %u left out\n", i);
      inputs[i] = NULL;
      continue;
    }
    if (got != (long)IN_BYTES(i)) {
      say("cuvil: error: cannot read %s: expected a file of %lu bytes\n", path,
          (unsigned long)IN_BYTES(i));
      return 1;
    }
    next += align_up(input_bytes[i]);
  }
  /* Poison the outputs (all-ones bytes are NaNs in float32) so any element
   * the model fails to write fails the comparison with the reference. */
  void *outputs[CUVIL_MODEL_NUM_OUTPUTS];
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i) {
    for (unsigned long b = 0; b < output_bytes[i]; ++b)
      next[b] = 0xff;
    outputs[i] = next;
    next += align_up(output_bytes[i]);
  }

  int rc = measured_run(inputs, outputs);
#if defined(CUVIL_RUNNER_TEAM) && defined(CUVIL_RUNNER_TEAM_MEASURE)
  cuvil_team_figures_t team = cuvil_team_figures();
  say("cuvil: team shares=%d sum=%llu max=%llu members=", CUVIL_MODEL_WORKERS,
      (unsigned long long)team.sum, (unsigned long long)team.max);
  for (int m = 0; m < CUVIL_MODEL_WORKERS && m < CUVIL_TEAM_MAX; ++m)
    say(m ? ",%llu" : "%llu", (unsigned long long)team.share[m]);
  say("\n");
#endif
#ifdef CUVIL_MODEL_CHECKED
  if (rc == CUVIL_ERR_BOUNDS)
    say("cuvil: error: bounds check failed after step %d (node '%s')\n",
        (int)model.bounds_step, cuvil_model_step_name(model.bounds_step));
#endif
#ifdef CUVIL_MODEL_LOOP_BOUNDS
  if (rc == CUVIL_ERR_LOOP_BOUND)
    say("cuvil: error: a loop would run past the bound it was built for "
        "(--loop-bound)\n");
#endif
  if (rc != 0)
    return fail_status("cuvil_model_run_v", rc);

  /* A header without a figure (cuvilc found no sound bound) says why in a
   * comment; the runner then prints `stated=none`. */
#ifdef CUVIL_MODEL_INIT_STACK_BYTES
  say("cuvil: stack init stated=%lu measured=%lu\n",
      (unsigned long)CUVIL_MODEL_INIT_STACK_BYTES, init_stack_used);
  if (init_stack_used > CUVIL_MODEL_INIT_STACK_BYTES)
    return fail_stack("init");
#else
  say("cuvil: stack init stated=none measured=%lu\n", init_stack_used);
#endif
#ifdef CUVIL_MODEL_RUN_STACK_BYTES
  say("cuvil: stack run stated=%lu measured=%lu\n",
      (unsigned long)CUVIL_MODEL_RUN_STACK_BYTES, run_stack_used);
  if (run_stack_used > CUVIL_MODEL_RUN_STACK_BYTES)
    return fail_stack("run");
#else
  say("cuvil: stack run stated=none measured=%lu\n", run_stack_used);
#endif

#ifdef CUVIL_MODEL_OUTPUT_SHAPES_VARY
  if (say_output_shapes() != 0)
    return 1;
#endif
  for (unsigned i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i) {
    const char *path = file_name(name, "out", i);
    if (!path)
      return 1;
    if (write_file(path, outputs[i], OUT_BYTES(i)) < 0) {
      say("cuvil: error: cannot write %s (%lu bytes)\n", path,
          (unsigned long)OUT_BYTES(i));
      return 1;
    }
  }

#ifdef CUVIL_MODEL_PROFILE
  /* --profile: the table for cuvilc run (profile_runs, then the rows), and
   * on a board also printed as firmware would print it. */
  if (!in_dir(name, "profile.bin"))
    return 1;
  if (write_file(name, &model.profile_runs,
                 sizeof model.profile_runs + sizeof model.profile) < 0) {
    say("cuvil: error: cannot write %s\n", name);
    return 1;
  }
#ifndef CUVIL_HOST
  CUVIL_MODEL_PROFILE_PRINT(&model);
#endif
#endif

#ifdef CUVIL_HOST
  say("cuvil: run ok\n");
#else
  say("cuvil: run ok cycles=%llu instret=%llu\n",
      (unsigned long long)run_cycles, (unsigned long long)run_instret);
#endif
  return 0;
}

#ifdef CUVIL_HOST
static void *run_model_thread(void *rc) {
  *(int *)rc = run_model();
  return NULL;
}

/* On the host, run_model runs in a thread whose whole stack is ours. */
int main(void) {
  pthread_attr_t attr;
  pthread_t thread;
  int rc = 1;
  if (pthread_attr_init(&attr) != 0 ||
      pthread_attr_setstack(&attr, host_stack, sizeof host_stack) != 0 ||
      pthread_create(&thread, &attr, run_model_thread, &rc) != 0 ||
      pthread_join(thread, NULL) != 0) {
    say("cuvil: error: cannot start the runner thread\n");
    return 1;
  }
  return rc;
}
#elif defined(CUVIL_RUNNER_ENTRY)
int CUVIL_RUNNER_ENTRY(const char *dir);
int CUVIL_RUNNER_ENTRY(const char *dir) {
  file_dir = dir;
  return run_model();
}
#else
int main(void) { return run_model(); }
#endif
