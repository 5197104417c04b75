# Mutant: never checks shapes or dtypes (mismatched inputs go to the kernel anyway)
# replaces: fused_add_mul
# must fail: hidden_fused_add_mul


def fused_add_mul(x, y, z):
    x, y, z = x.contiguous(), y.contiguous(), z.contiguous()
    out = torch.empty_like(x)
    n = min(x.numel(), y.numel(), z.numel())
    if n:
        add_mul_kernel[(triton.cdiv(n, 1024),)](x, y, z, out, n, BLOCK=1024)
    return out
