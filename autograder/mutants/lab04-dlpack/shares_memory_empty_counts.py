# Mutant: forgets that an empty array covers no bytes: its range is one element at its data pointer
# replaces: shares_memory
# must fail: hidden_shares_memory


def shares_memory(a, b):
    def byte_range(x):
        if isinstance(x, torch.Tensor):
            start, itemsize = x.data_ptr(), x.element_size()
            shape, strides = tuple(x.shape), tuple(s * itemsize for s in x.stride())
            device = str(x.device)
        elif isinstance(x, np.ndarray):
            start, itemsize = x.__array_interface__["data"][0], x.itemsize
            shape, strides, device = x.shape, x.strides, "cpu"
        elif isinstance(x, jax.Array):
            start = x.unsafe_buffer_pointer()
            return "cpu", start, start + max(x.nbytes, x.dtype.itemsize)
        else:
            raise TypeError(f"unsupported type {type(x).__name__}")
        low = high = start
        for size, stride in zip(shape, strides):
            if size == 0:
                continue
            if stride > 0:
                high += (size - 1) * stride
            else:
                low += (size - 1) * stride
        return device, low, high + itemsize

    ra, rb = byte_range(a), byte_range(b)
    if ra[0] != rb[0]:
        return False
    return ra[1] < rb[2] and rb[1] < ra[2]
