# Mutant: assumes every array is dense: its range is nbytes from the data pointer, whatever the strides
# replaces: shares_memory
# must fail: hidden_shares_memory


def shares_memory(a, b):
    def byte_range(x):
        if isinstance(x, torch.Tensor):
            start, nbytes, device = x.data_ptr(), x.numel() * x.element_size(), str(x.device)
        elif isinstance(x, np.ndarray):
            start, nbytes, device = x.__array_interface__["data"][0], x.nbytes, "cpu"
        elif isinstance(x, jax.Array):
            start, nbytes, device = x.unsafe_buffer_pointer(), x.nbytes, "cpu"
        else:
            raise TypeError(f"unsupported type {type(x).__name__}")
        return (device, start, start + nbytes) if nbytes else None

    ra, rb = byte_range(a), byte_range(b)
    if ra is None or rb is None or ra[0] != rb[0]:
        return False
    return ra[1] < rb[2] and rb[1] < ra[2]
