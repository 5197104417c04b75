# Mutant: rounds half up (adds 0x8000) instead of ties to even
# replaces: to_bfloat16_rne
# must fail: test_to_bfloat16_rne, hidden_to_bfloat16_rne
import torch


def to_bfloat16_rne(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.view(torch.int32).to(torch.int64)
    rounded = (bits + 0x8000) >> 16
    is_nan = (bits & 0x7FFFFFFF) > 0x7F800000
    rounded = torch.where(is_nan, 0x7FC0, rounded)
    return rounded.to(torch.int16).view(torch.bfloat16)
