# Mutant: for two torch tensors, compares their storages (same storage -> True) instead of their byte ranges
# replaces: shares_memory
# must fail: test_shares_memory, hidden_shares_memory


def shares_memory(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.numel() == 0 or b.numel() == 0:
            return False
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()

    def byte_range(x):
        if isinstance(x, torch.Tensor):
            if x.numel() == 0:
                return None
            start, itemsize = x.data_ptr(), x.element_size()
            shape, strides = tuple(x.shape), tuple(s * itemsize for s in x.stride())
        elif isinstance(x, np.ndarray):
            if x.size == 0:
                return None
            start, itemsize = x.__array_interface__["data"][0], x.itemsize
            shape, strides = x.shape, x.strides
        elif isinstance(x, jax.Array):
            if x.size == 0:
                return None
            start = x.unsafe_buffer_pointer()
            return start, start + x.nbytes
        else:
            raise TypeError(f"unsupported type {type(x).__name__}")
        low = high = start
        for size, stride in zip(shape, strides):
            if stride > 0:
                high += (size - 1) * stride
            else:
                low += (size - 1) * stride
        return low, high + itemsize

    ra, rb = byte_range(a), byte_range(b)
    return ra is not None and rb is not None and ra[0] < rb[1] and rb[0] < ra[1]
