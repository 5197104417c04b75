# Mutant: launches n // BLOCK programs instead of cdiv(n, BLOCK), so the tail of the data is never computed
# replaces: fused_add_mul
# must fail: test_fused_add_mul, hidden_fused_add_mul


def fused_add_mul(x, y, z):
    if not (x.shape == y.shape == z.shape):
        raise ValueError("shapes differ")
    if not (x.dtype == y.dtype == z.dtype) or x.dtype not in (torch.float32, torch.float16):
        raise TypeError("dtypes differ or are not float32/float16")
    x, y, z = x.contiguous(), y.contiguous(), z.contiguous()
    out = torch.zeros_like(x)
    n = x.numel()
    if n:
        add_mul_kernel[(n // 1024,)](x, y, z, out, n, BLOCK=1024)
    return out
