# Mutant: compares only the start addresses (data pointers): views at other offsets are missed
# replaces: shares_memory
# must fail: test_shares_memory, hidden_shares_memory


def shares_memory(a, b):
    def start(x):
        if isinstance(x, torch.Tensor):
            return x.data_ptr() if x.numel() else None
        if isinstance(x, np.ndarray):
            return x.__array_interface__["data"][0] if x.size else None
        if isinstance(x, jax.Array):
            return x.unsafe_buffer_pointer() if x.size else None
        raise TypeError(f"unsupported type {type(x).__name__}")

    sa, sb = start(a), start(b)
    return sa is not None and sa == sb
