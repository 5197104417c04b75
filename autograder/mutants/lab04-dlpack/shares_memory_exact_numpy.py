# Mutant: converts everything to NumPy and asks np.shares_memory (exact element overlap, not byte ranges)
# replaces: shares_memory
# must fail: hidden_shares_memory


def shares_memory(a, b):
    def as_numpy(x):
        if isinstance(x, torch.Tensor):
            return x.detach().numpy()
        if isinstance(x, (np.ndarray, jax.Array)):
            return np.asarray(x)
        raise TypeError(f"unsupported type {type(x).__name__}")

    return bool(np.shares_memory(as_numpy(a), as_numpy(b)))
