# Mutant: builds the right view, then makes it contiguous (a copy, not a view)
# replaces: broadcast_view
# must fail: test_broadcast_view, hidden_broadcast_view


def broadcast_view(t, shape):
    target = [int(s) for s in shape]
    n_new = len(target) - t.dim()
    sizes, strides = [], []
    for i, want in enumerate(target):
        if i < n_new:
            sizes.append(want)
            strides.append(0)
        else:
            size, stride = t.shape[i - n_new], t.stride(i - n_new)
            if want == -1 or want == size:
                sizes.append(size)
                strides.append(stride)
            elif size == 1:
                sizes.append(want)
                strides.append(0)
            else:
                raise RuntimeError(f"size {want} does not match {size} at dim {i}")
    return t.as_strided(sizes, strides, t.storage_offset()).contiguous()
