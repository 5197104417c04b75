# Mutant: calls the built-in conversion it was asked to rebuild with integer ops
# replaces: to_bfloat16_rne
# must fail: test_to_bfloat16_rne, hidden_to_bfloat16_rne
import torch


def to_bfloat16_rne(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    return x.to(torch.bfloat16)
