# Mutant: widens every integer type DLPack lacks to int8, unsigned ones included
# replaces: from_jax
# must fail: hidden_from_jax


def from_jax(x):
    try:
        return torch.from_dlpack(x)
    except (BufferError, jax.errors.JaxRuntimeError):
        pass
    wide = jnp.int8 if jnp.issubdtype(x.dtype, jnp.integer) else jnp.float32
    return torch.from_dlpack(x.astype(wide))
