# Mutant: rounds the magnitude (bits & 0x7FFFFFFF) and forgets to put the sign bit back
# replaces: to_bfloat16_rne
# must fail: test_to_bfloat16_rne, hidden_to_bfloat16_rne
import torch


def to_bfloat16_rne(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    magnitude = x.view(torch.int32).to(torch.int64) & 0x7FFFFFFF
    rounded = (magnitude + 0x7FFF + ((magnitude >> 16) & 1)) >> 16
    rounded = torch.where(magnitude > 0x7F800000, 0x7FC0, rounded)
    return rounded.to(torch.int16).view(torch.bfloat16)
