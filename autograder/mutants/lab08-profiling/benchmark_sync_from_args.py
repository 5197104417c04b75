# Mutant: with sync=None, syncs CUDA only when an argument is a CUDA tensor (fn may use the GPU with none)
# replaces: benchmark
# must fail: hidden_benchmark
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
        on_cuda = any(isinstance(a, torch.Tensor) and a.is_cuda for a in args)
        sync = torch.cuda.synchronize if on_cuda else (lambda: None)
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(reps):
        sync()
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
