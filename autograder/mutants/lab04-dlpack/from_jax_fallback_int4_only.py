# Mutant: handles the sub-byte integers but not the float formats DLPack lacks
# replaces: from_jax
# must fail: hidden_from_jax


def from_jax(x):
    if x.dtype in (jnp.int4, jnp.int2):
        x = x.astype(jnp.int8)
    elif x.dtype in (jnp.uint4, jnp.uint2):
        x = x.astype(jnp.uint8)
    return torch.from_dlpack(x)
