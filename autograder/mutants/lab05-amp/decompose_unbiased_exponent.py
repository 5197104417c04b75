# Mutant: returns the true exponent (field - bias) instead of the raw, biased exponent field
# replaces: decompose
# must fail: test_decompose, hidden_decompose
import torch


def decompose(x):
    layouts = {torch.float32: (torch.int32, 8, 23, 127), torch.float16: (torch.int16, 5, 10, 15),
               torch.bfloat16: (torch.int16, 8, 7, 127)}
    if x.dtype not in layouts:
        raise TypeError(f"unsupported dtype {x.dtype}")
    int_dtype, n_exp, n_mant, bias = layouts[x.dtype]
    bits = x.view(int_dtype).to(torch.int32)
    sign = (bits >> (n_exp + n_mant)) & 1
    exponent = ((bits >> n_mant) & ((1 << n_exp) - 1)) - bias
    mantissa = bits & ((1 << n_mant) - 1)
    return sign, exponent, mantissa
