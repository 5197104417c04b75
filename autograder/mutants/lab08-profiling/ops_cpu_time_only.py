# Mutant: always uses self CPU time, even when the profile recorded GPU work (CPU time there is launch overhead)
# replaces: ops_over_threshold
# must fail: hidden_ops_over_threshold
from torch.autograd import DeviceType


def ops_over_threshold(prof, fraction=0.05):
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be between 0 and 1, got {fraction!r}")
    times = {}
    for r in prof.key_averages():
        if r.device_type == DeviceType.CPU:
            times[r.key] = times.get(r.key, 0.0) + float(r.self_cpu_time_total)
    total = sum(times.values())
    if total <= 0:
        return []
    shares = [(name, t / total) for name, t in times.items() if t / total > fraction]
    return sorted(shares, key=lambda kv: (-kv[1], kv[0]))
