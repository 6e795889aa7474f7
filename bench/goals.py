"""The figures issue 5 asks of the benchmark set, shared by the report
(scripts/bench_report.py, which prints each figure next to its goal) and
the instruction guard (bench/run_bench.py --guard, which fails a board
count that misses its goal)."""

CONV_HEAVY = {"resnet8", "mobilenet_v1_025", "mobilenet_v2"}
FULLY_CONNECTED = {"mlp", "autoencoder"}
GOALS = {  # (target, model) -> goal on instructions per MAC
    **{("a78", m): 0.5 for m in CONV_HEAVY},
    **{("a78", m): 0.4 for m in FULLY_CONNECTED},
    **{("u74-mc", m): 1.6 for m in CONV_HEAVY},
}
HOST_RATIO_GOAL = 1.0
TEXT_GROWTH_GOAL = 64 * 1024  # bytes of .text above the portable-kernel build
