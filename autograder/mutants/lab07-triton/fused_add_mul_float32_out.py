# Mutant: allocates the output with torch.empty(n) (float32, the default dtype) whatever the input's dtype
# replaces: fused_add_mul
# must fail: hidden_fused_add_mul


def fused_add_mul(x, y, z):
    if not (x.shape == y.shape == z.shape):
        raise ValueError("shapes differ")
    if not (x.dtype == y.dtype == z.dtype) or x.dtype not in (torch.float32, torch.float16):
        raise TypeError("dtypes differ or are not float32/float16")
    x, y, z = x.contiguous(), y.contiguous(), z.contiguous()
    n = x.numel()
    out = torch.empty(n, device=x.device)
    if n:
        add_mul_kernel[(triton.cdiv(n, 1024),)](x, y, z, out, n, BLOCK=1024)
    return out.view(x.shape)
