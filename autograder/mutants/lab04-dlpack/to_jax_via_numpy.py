# Mutant: goes through NumPy (jnp.asarray(t.numpy())), which copies every time
# replaces: to_jax
# must fail: test_to_jax, hidden_to_jax


def to_jax(t):
    if t.dtype in (torch.float64, torch.int64, torch.uint64, torch.complex128) and not jax.config.jax_enable_x64:
        raise TypeError(f"JAX has x64 disabled: cast {t.dtype} first")
    t = t.detach()
    if t.layout != torch.strided:
        t = t.to_dense()
    t = t.resolve_conj().resolve_neg()
    if t.dtype == torch.complex32:
        t = t.to(torch.complex64)
    return jnp.asarray(t.numpy())
