# Mutant: torch.from_dlpack alone, with no plan for dtypes DLPack cannot carry
# replaces: from_jax
# must fail: test_from_jax, hidden_from_jax


def from_jax(x):
    return torch.from_dlpack(x)
