# Mutant: right bits, but finds the NaNs with torch.isnan, a floating-point op
# replaces: to_bfloat16_rne
# must fail: test_to_bfloat16_rne, hidden_to_bfloat16_rne
import torch


def to_bfloat16_rne(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.view(torch.int32).to(torch.int64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    rounded = torch.where(torch.isnan(x), 0x7FC0, rounded)
    return rounded.to(torch.int16).view(torch.bfloat16)
