# Mutant: calls a kernel compute-bound when it does more than 1 FLOP per byte, whatever the machine's ridge
# replaces: roofline_point
# must fail: hidden_roofline_point
import math


def roofline_point(flops, bytes, peak_flops, peak_bw):
    for name, v in {"flops": flops, "bytes": bytes, "peak_flops": peak_flops, "peak_bw": peak_bw}.items():
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite")
    if flops < 0 or bytes < 0 or peak_flops <= 0 or peak_bw <= 0 or (flops == 0 and bytes == 0):
        raise ValueError("invalid arguments")
    intensity = flops / bytes if bytes else math.inf
    bound = "compute" if intensity > 1 else "memory"
    return {"intensity": float(intensity), "bound": bound, "attainable": float(min(peak_flops, intensity * peak_bw))}
