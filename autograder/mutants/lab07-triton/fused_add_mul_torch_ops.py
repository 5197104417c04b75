# Mutant: computes (x + y) * z with torch ops, no Triton kernel at all
# replaces: fused_add_mul
# must fail: test_fused_add_mul, hidden_fused_add_mul


def fused_add_mul(x, y, z):
    if not (x.shape == y.shape == z.shape):
        raise ValueError("shapes differ")
    if not (x.dtype == y.dtype == z.dtype) or x.dtype not in (torch.float32, torch.float16):
        raise TypeError("dtypes differ or are not float32/float16")
    return (x + y) * z
