# Mutant: takes the quartiles from statistics.quantiles' default ("exclusive") method, not linear interpolation
# replaces: benchmark
# must fail: test_benchmark, hidden_benchmark
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
    q1, _, q3 = statistics.quantiles(times, n=4) if len(times) > 1 else (times[0],) * 3
    return {"median": float(statistics.median(times)), "iqr": q3 - q1, "min": min(times), "times": times}
