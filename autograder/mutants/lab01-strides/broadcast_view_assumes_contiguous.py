# Mutant: uses the row-major strides of t's shape instead of t's own strides (right only for contiguous t)
# replaces: broadcast_view
# must fail: hidden_broadcast_view


def broadcast_view(t, shape):
    target = [int(s) for s in shape]
    n_new = len(target) - t.dim()
    if n_new < 0:
        raise RuntimeError("shape has fewer dims than the tensor")
    own, step = [], 1
    for size in reversed(t.shape):
        own.insert(0, step)
        step *= max(size, 1)
    sizes = [0] * len(target)
    strides = [0] * len(target)
    for i in reversed(range(len(target))):
        want = target[i]
        if i >= n_new:
            size, stride = t.shape[i - n_new], own[i - n_new]
            if want == -1:
                want = size
        else:
            if want == -1:
                raise RuntimeError(f"size -1 is not allowed in new leading dim {i}")
            size = 1
            stride = sizes[i + 1] * strides[i + 1] if i + 1 < len(target) else 0
        if want < 0:
            raise RuntimeError(f"invalid size {want} at dim {i}")
        if want != size:
            if size != 1:
                raise RuntimeError(f"size {want} does not match {size} at dim {i}")
            stride = 0
        sizes[i], strides[i] = want, stride
    return t.as_strided(sizes, strides, t.storage_offset())
