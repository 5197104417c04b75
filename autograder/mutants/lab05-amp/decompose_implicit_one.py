# Mutant: adds the implicit leading 1 to the mantissa of normal numbers (the stored field has no such bit)
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
    sign = (bits >> (n_exp + n_mant)) & 1
    exponent = (bits >> n_mant) & ((1 << n_exp) - 1)
    mantissa = bits & ((1 << n_mant) - 1)
    mantissa = torch.where(exponent > 0, mantissa | (1 << n_mant), mantissa)
    return sign, exponent, mantissa
