# Mutant: rounds every bit pattern the same way, so a NaN's carry can turn it into inf (or wrap past the sign)
# replaces: to_bfloat16_rne
# must fail: hidden_to_bfloat16_rne
import torch


def to_bfloat16_rne(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.view(torch.int32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.to(torch.int16).view(torch.bfloat16)
