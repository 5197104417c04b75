# Mutant: keeps the high 16 bits and drops the rest (round toward zero)
# replaces: to_bfloat16_rne
# must fail: test_to_bfloat16_rne, hidden_to_bfloat16_rne
import torch


def to_bfloat16_rne(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    return (x.view(torch.int32) >> 16).to(torch.int16).view(torch.bfloat16)
