# Mutant: one Triton kernel for the add and a second one for the multiply (two launches, a temporary)
# replaces: fused_add_mul
# must fail: test_fused_add_mul, hidden_fused_add_mul


@triton.jit
def binary_kernel(a_ptr, b_ptr, out_ptr, n, IS_ADD: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    if IS_ADD:
        tl.store(out_ptr + offsets, a + b, mask=mask)
    else:
        tl.store(out_ptr + offsets, a * b, mask=mask)


def fused_add_mul(x, y, z):
    if not (x.shape == y.shape == z.shape):
        raise ValueError("shapes differ")
    if not (x.dtype == y.dtype == z.dtype) or x.dtype not in (torch.float32, torch.float16):
        raise TypeError("dtypes differ or are not float32/float16")
    x, y, z = x.contiguous(), y.contiguous(), z.contiguous()
    n = x.numel()
    tmp, out = torch.empty_like(x), torch.empty_like(x)
    if n:
        grid = (triton.cdiv(n, 1024),)
        binary_kernel[grid](x, y, tmp, n, IS_ADD=True, BLOCK=1024)
        binary_kernel[grid](tmp, z, out, n, IS_ADD=False, BLOCK=1024)
    return out
