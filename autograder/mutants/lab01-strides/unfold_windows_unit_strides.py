# Mutant: assumes dim has stride 1: window stride = step, element stride = 1 (wrong on non-contiguous input)
# replaces: unfold_windows
# must fail: hidden_unfold_windows


def unfold_windows(t, dim, size, step):
    ndim = t.dim()
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    dim %= rank
    length = t.shape[dim] if ndim else 1
    if not 0 <= size <= length:
        raise RuntimeError(f"window size {size} must be between 0 and {length}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    sizes, strides = list(t.shape), list(t.stride())
    if ndim:
        sizes[dim] = (length - size) // step + 1
        strides[dim] = step
    return t.as_strided(sizes + [size], strides + [1], t.storage_offset())
