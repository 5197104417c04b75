# Mutant: times all runs together with one pair of clock reads and divides by reps (no per-run times, no spread)
# replaces: benchmark
# must fail: test_benchmark, hidden_benchmark
import time

import torch


def benchmark(fn, *args, warmup=3, reps=10, sync=None, timer=time.perf_counter):
    if reps < 1:
        raise ValueError(f"reps must be at least 1, got {reps}")
    if warmup < 0:
        raise ValueError(f"warmup must be 0 or more, got {warmup}")
    if sync is None:
        sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for _ in range(warmup):
        fn(*args)
    sync()
    start = timer()
    for _ in range(reps):
        fn(*args)
    sync()
    each = float(timer() - start) / reps
    return {"median": each, "iqr": 0.0, "min": each, "times": [each] * reps}
