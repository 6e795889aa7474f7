"""The figures issue 5 asks of the benchmark set, shared by the report
(scripts/bench_report.py, which prints each figure next to its goal) and
the instruction guard (bench/run_bench.py --guard, which fails a board
count that misses its goal)."""

CONV_HEAVY = {"resnet8", "mobilenet_v1_025", "mobilenet_v2"}
# Built with --cores 2 and 4 too (run_bench.py bench_cores): the
# convolution models and INT8 twins of two of them.
MULTICORE = CONV_HEAVY | {"resnet8_int8", "mobilenet_v1_025_int8"}
FULLY_CONNECTED = {"mlp", "autoencoder"}
# Issue 17's sequence models (bench/models.py).
SEQUENCE = {"transformer_d64_s32", "transformer_d128_s128", "lstm_kws"}
GOALS = {  # (target, model) -> goal on instructions per MAC
    **{("a78", m): 0.5 for m in CONV_HEAVY},
    **{("a78", m): 0.4 for m in FULLY_CONNECTED},
    **{("u74-mc", m): 1.6 for m in CONV_HEAVY},
    **{("a78", m): 0.5 for m in SEQUENCE},
    **{("u74-mc", m): 1.8 for m in SEQUENCE},
}
HOST_RATIO_GOAL = 1.0
TEXT_GROWTH_GOAL = 64 * 1024  # bytes of .text above the portable-kernel build

# The INT8 twins (bench/models.py: NAME_int8, quantized from NAME's
# architecture), issue 13's figures, reported in their own table by
# scripts/bench_report.py next to the float model's.
INT8_SUFFIX = "_int8"
INT8_A78_PER_MAC = 0.15        # a78 instructions per MAC (sdot: 16 MACs each)
INT8_WEIGHTS_RATIO = 0.27      # weight blob against the float model's
INT8_ARENA_RATIO = 0.30        # arena against the float model's
# u74-mc: no more instructions than the float build; host: faster than ORT.

# Issue 17: with 4 cores, the critical path (bench/run_bench.py --cores
# figures) at most this fraction of the single-core instruction count.
CORES4_CRITICAL_RATIO = 0.30

# Issue 17: `cuvilc build` of MobileNetV2 for a78 within this many seconds
# of wall time (median of 3, bench/run_bench.py).
COMPILE_SECONDS_GOAL = {("a78", "mobilenet_v2"): 3.0}

# Issue 17: a stack of 4x the layers builds within this many times as long
# (bench/run_bench.py bench_depth).
DEPTH_SCALING_GOAL = 4.5
