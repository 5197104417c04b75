# Mutant: asks JAX for the copy (jnp.from_dlpack(..., copy=True)) instead of copying with torch
# replaces: to_jax
# must fail: test_to_jax, hidden_to_jax


def to_jax(t):
    if t.dtype in (torch.float64, torch.int64, torch.uint64, torch.complex128) and not jax.config.jax_enable_x64:
        raise TypeError(f"JAX has x64 disabled: cast {t.dtype} first")
    need_copy = t.requires_grad
    t = t.detach()
    if t.layout != torch.strided:
        t = t.to_dense()
    t = t.resolve_conj().resolve_neg()
    if t.dtype == torch.complex32:
        t = t.to(torch.complex64)
    dense, step = True, 1
    for stride, size in sorted((st, s) for s, st in zip(t.shape, t.stride()) if s != 1):
        if stride != step:
            dense = False
            break
        step *= size
    if not dense:
        t = t.contiguous()
    return jnp.from_dlpack(t, copy=True) if need_copy else jnp.from_dlpack(t)
