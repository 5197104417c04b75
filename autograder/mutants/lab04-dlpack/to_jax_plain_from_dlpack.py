# Mutant: hands every tensor straight to jnp.from_dlpack and trusts it to cope
# replaces: to_jax
# must fail: test_to_jax, hidden_to_jax


def to_jax(t):
    return jnp.from_dlpack(t)
