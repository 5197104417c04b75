# Mutant: reads a plain global BLOCK inside the kernel (the interpreter runs it, the Triton compiler rejects it)
# replaces: fused_add_mul
# must fail: test_fused_add_mul, hidden_fused_add_mul

BLOCK_SIZE = 1024


@triton.jit
def add_mul_global_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    z = tl.load(z_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, (x + y) * z, mask=mask)


def fused_add_mul(x, y, z):
    if not (x.shape == y.shape == z.shape):
        raise ValueError("shapes differ")
    if not (x.dtype == y.dtype == z.dtype) or x.dtype not in (torch.float32, torch.float16):
        raise TypeError("dtypes differ or are not float32/float16")
    x, y, z = x.contiguous(), y.contiguous(), z.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        add_mul_global_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, z, out, n)
    return out
