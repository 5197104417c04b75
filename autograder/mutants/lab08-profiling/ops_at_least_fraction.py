# Mutant: keeps ops whose share is at least the fraction (>=), not strictly above it
# replaces: ops_over_threshold
# must fail: hidden_ops_over_threshold
from torch.autograd import DeviceType


def ops_over_threshold(prof, fraction=0.05):
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be between 0 and 1, got {fraction!r}")
    rows = [r for r in prof.key_averages() if r.device_type == DeviceType.CPU]
    on_device = any(r.self_device_time_total > 0 for r in rows)
    times = {}
    for r in rows:
        t = r.self_device_time_total if on_device else r.self_cpu_time_total
        times[r.key] = times.get(r.key, 0.0) + float(t)
    total = sum(times.values())
    if total <= 0:
        return []
    shares = [(name, t / total) for name, t in times.items() if t / total >= fraction]
    return sorted(shares, key=lambda kv: (-kv[1], kv[0]))
