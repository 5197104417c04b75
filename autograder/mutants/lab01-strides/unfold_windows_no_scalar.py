# Mutant: handles only tensors with at least one dim, so 0-d tensors raise IndexError
# replaces: unfold_windows
# must fail: hidden_unfold_windows


def unfold_windows(t, dim, size, step):
    length = t.shape[dim]
    if not 0 <= size <= length:
        raise RuntimeError(f"window size {size} must be between 0 and {length}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    sizes, strides = list(t.shape), list(t.stride())
    inner = strides[dim]
    sizes[dim] = (length - size) // step + 1
    strides[dim] *= step
    return t.as_strided(sizes + [size], strides + [inner], t.storage_offset())
