# Mutant: takes abs() of every stride, so a negative-stride NumPy view's range grows the wrong way
# replaces: shares_memory
# must fail: hidden_shares_memory


def shares_memory(a, b):
    def byte_range(x):
        if isinstance(x, torch.Tensor):
            if x.numel() == 0:
                return None
            start, itemsize = x.data_ptr(), x.element_size()
            shape, strides = tuple(x.shape), tuple(s * itemsize for s in x.stride())
            device = str(x.device)
        elif isinstance(x, np.ndarray):
            if x.size == 0:
                return None
            start, itemsize = x.__array_interface__["data"][0], x.itemsize
            shape, strides, device = x.shape, x.strides, "cpu"
        elif isinstance(x, jax.Array):
            if x.size == 0:
                return None
            start = x.unsafe_buffer_pointer()
            return "cpu", start, start + x.nbytes
        else:
            raise TypeError(f"unsupported type {type(x).__name__}")
        high = start + sum((size - 1) * abs(stride) for size, stride in zip(shape, strides))
        return device, start, high + itemsize

    ra, rb = byte_range(a), byte_range(b)
    if ra is None or rb is None or ra[0] != rb[0]:
        return False
    return ra[1] < rb[2] and rb[1] < ra[2]
