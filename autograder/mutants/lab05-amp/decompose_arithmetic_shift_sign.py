# Mutant: takes the sign as bits >> (width - 1) without masking, so the arithmetic shift gives -1 for negatives
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
    if int_dtype == torch.int16:
        sign = bits >> 15  # the int16 was sign-extended: this is -1 for a negative number
    else:
        sign = bits >> 31
    exponent = (bits >> n_mant) & ((1 << n_exp) - 1)
    mantissa = bits & ((1 << n_mant) - 1)
    return sign, exponent, mantissa
