# Mutant: clones the tensor "to be safe", so nothing is ever shared
# replaces: from_jax
# must fail: test_from_jax, hidden_from_jax


def from_jax(x):
    try:
        return torch.from_dlpack(x).clone()
    except (BufferError, jax.errors.JaxRuntimeError):
        pass
    if jnp.issubdtype(x.dtype, jnp.signedinteger):
        wide = jnp.int8
    elif jnp.issubdtype(x.dtype, jnp.unsignedinteger):
        wide = jnp.uint8
    else:
        wide = jnp.float32
    return torch.from_dlpack(x.astype(wide))
