# Mutant: goes through NumPy and torch.tensor, which copies (and NumPy has no bfloat16 in torch's eyes)
# replaces: from_jax
# must fail: test_from_jax, hidden_from_jax


def from_jax(x):
    if x.dtype in (jnp.int4, jnp.int2):
        x = x.astype(jnp.int8)
    elif x.dtype in (jnp.uint4, jnp.uint2):
        x = x.astype(jnp.uint8)
    return torch.tensor(np.asarray(x))
