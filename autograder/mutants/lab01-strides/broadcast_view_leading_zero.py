# Mutant: gives every new leading dim stride 0, size-1 ones included (torch lays those out as unsqueeze does)
# replaces: broadcast_view
# must fail: test_broadcast_view, hidden_broadcast_view


def broadcast_view(t, shape):
    target = [int(s) for s in shape]
    n_new = len(target) - t.dim()
    if n_new < 0:
        raise RuntimeError("shape has fewer dims than the tensor")
    sizes, strides = [], []
    for i, want in enumerate(target):
        if i < n_new:
            if want < 0:
                raise RuntimeError(f"size {want} is not allowed in new leading dim {i}")
            sizes.append(want)
            strides.append(0)
            continue
        size, stride = t.shape[i - n_new], t.stride(i - n_new)
        if want == -1:
            want = size
        if want < 0:
            raise RuntimeError(f"invalid size {want} at dim {i}")
        if want != size:
            if size != 1:
                raise RuntimeError(f"size {want} does not match {size} at dim {i}")
            stride = 0
        sizes.append(want)
        strides.append(stride)
    return t.as_strided(sizes, strides, t.storage_offset())
