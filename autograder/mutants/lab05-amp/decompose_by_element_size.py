# Mutant: picks the layout from the element size, so an int32 or int16 tensor is silently decomposed as a float
# replaces: decompose
# must fail: hidden_decompose
import torch


def decompose(x):
    if x.element_size() == 4:
        int_dtype, n_exp, n_mant = torch.int32, 8, 23
    elif x.element_size() == 2:
        int_dtype, n_exp, n_mant = (torch.int16, 8, 7) if x.dtype == torch.bfloat16 else (torch.int16, 5, 10)
    else:
        raise TypeError(f"unsupported dtype {x.dtype}")
    bits = x.view(int_dtype).to(torch.int32)
    sign = (bits >> (n_exp + n_mant)) & 1
    exponent = (bits >> n_mant) & ((1 << n_exp) - 1)
    mantissa = bits & ((1 << n_mant) - 1)
    return sign, exponent, mantissa
