# Mutant: syncs only after fn, not before starting the clock, so queued earlier work is billed to the run
# replaces: benchmark
# must fail: test_benchmark, hidden_benchmark
import math
import statistics
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
    times = []
    for _ in range(reps):
        start = timer()
        fn(*args)
        sync()
        times.append(float(timer() - start))
    s = sorted(times)

    def percentile(q):
        pos = q * (len(s) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)

    return {"median": float(statistics.median(times)), "iqr": percentile(0.75) - percentile(0.25), "min": s[0],
            "times": times}
