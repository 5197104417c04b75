# Mutant: both 16-bit formats get float16's layout (5 exponent bits, 10 mantissa bits)
# replaces: decompose
# must fail: test_decompose, hidden_decompose
import torch


def decompose(x):
    if x.dtype == torch.float32:
        int_dtype, n_exp, n_mant = torch.int32, 8, 23
    elif x.dtype in (torch.float16, torch.bfloat16):
        int_dtype, n_exp, n_mant = torch.int16, 5, 10
    else:
        raise TypeError(f"unsupported dtype {x.dtype}")
    bits = x.view(int_dtype).to(torch.int32)
    sign = (bits >> (n_exp + n_mant)) & 1
    exponent = (bits >> n_mant) & ((1 << n_exp) - 1)
    mantissa = bits & ((1 << n_mant) - 1)
    return sign, exponent, mantissa
