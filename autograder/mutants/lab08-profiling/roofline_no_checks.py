# Mutant: checks nothing: negative sizes, zero peaks and NaN go through (or fail with the wrong error)
# replaces: roofline_point
# must fail: hidden_roofline_point
import math


def roofline_point(flops, bytes, peak_flops, peak_bw):
    intensity = flops / bytes if bytes else math.inf
    bound = "memory" if intensity * peak_bw < peak_flops else "compute"
    return {"intensity": float(intensity), "bound": bound, "attainable": float(min(peak_flops, intensity * peak_bw))}
