# Mutant: forgets torch.complex32, which DLPack exports but JAX cannot import
# replaces: to_jax
# must fail: hidden_to_jax


def to_jax(t):
    if t.dtype in (torch.float64, torch.int64, torch.uint64, torch.complex128) and not jax.config.jax_enable_x64:
        raise TypeError(f"JAX has x64 disabled: cast {t.dtype} first")
    if t.requires_grad:
        t = t.detach().clone()
    if t.layout != torch.strided:
        t = t.to_dense()
    t = t.resolve_conj().resolve_neg()
    try:
        return jnp.from_dlpack(t)
    except jax.errors.JaxRuntimeError:
        return jnp.from_dlpack(t.contiguous())
