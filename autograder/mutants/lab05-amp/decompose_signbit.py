# Mutant: reads the sign with torch.signbit, a floating-point op (right values, but not integer ops only)
# replaces: decompose
# must fail: test_decompose, hidden_decompose
import torch


def decompose(x):
    layouts = {torch.float32: (torch.int32, 8, 23), torch.float16: (torch.int16, 5, 10),
               torch.bfloat16: (torch.int16, 8, 7)}
    if x.dtype not in layouts:
        raise TypeError(f"unsupported dtype {x.dtype}")
    int_dtype, n_exp, n_mant = layouts[x.dtype]
    bits = x.view(int_dtype).to(torch.int32)
    sign = torch.signbit(x).to(torch.int32)
    exponent = (bits >> n_mant) & ((1 << n_exp) - 1)
    mantissa = bits & ((1 << n_mant) - 1)
    return sign, exponent, mantissa
