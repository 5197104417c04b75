# Mutant: returns the run times sorted, losing the order they ran in (and with it any drift to look at)
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
        sync()
        start = timer()
        fn(*args)
        sync()
        times.append(float(timer() - start))
    times.sort()

    def percentile(q):
        pos = q * (len(times) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(times) - 1)
        return times[lo] + (times[hi] - times[lo]) * (pos - lo)

    return {"median": float(statistics.median(times)), "iqr": percentile(0.75) - percentile(0.25),
            "min": times[0], "times": times}
