# Mutant: adds in torch and only multiplies in the Triton kernel (one launch, but x + y makes an extra pass)
# replaces: fused_add_mul
# must fail: test_fused_add_mul, hidden_fused_add_mul


@triton.jit
def mul_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) * tl.load(b_ptr + offsets, mask=mask), mask=mask)


def fused_add_mul(x, y, z):
    if not (x.shape == y.shape == z.shape):
        raise ValueError("shapes differ")
    if not (x.dtype == y.dtype == z.dtype) or x.dtype not in (torch.float32, torch.float16):
        raise TypeError("dtypes differ or are not float32/float16")
    s = (x + y).contiguous()
    z = z.contiguous()
    out = torch.empty_like(s)
    n = s.numel()
    if n:
        mul_kernel[(triton.cdiv(n, 1024),)](s, z, out, n, BLOCK=1024)
    return out
