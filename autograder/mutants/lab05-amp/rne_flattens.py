# Mutant: works on x.reshape(-1) and returns the flat result (wrong shape for 0-d and 2-D inputs)
# replaces: to_bfloat16_rne
# must fail: hidden_to_bfloat16_rne
import torch


def to_bfloat16_rne(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.reshape(-1).view(torch.int32).to(torch.int64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    rounded = torch.where((bits & 0x7FFFFFFF) > 0x7F800000, 0x7FC0, rounded)
    return rounded.to(torch.int16).view(torch.bfloat16)
