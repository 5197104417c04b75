# Mutant: broadcasts any dim whose size differs, never raising for non-singleton mismatches
# replaces: broadcast_view
# must fail: test_broadcast_view, hidden_broadcast_view


def broadcast_view(t, shape):
    target = [int(s) for s in shape]
    n_new = len(target) - t.dim()
    if n_new < 0:
        raise RuntimeError("shape has fewer dims than the tensor")
    sizes = [0] * len(target)
    strides = [0] * len(target)
    for i in reversed(range(len(target))):
        want = target[i]
        if i >= n_new:
            size, stride = t.shape[i - n_new], t.stride(i - n_new)
            if want == -1:
                want = size
        else:
            if want == -1:
                raise RuntimeError(f"size -1 is not allowed in new leading dim {i}")
            size = 1
            stride = sizes[i + 1] * strides[i + 1] if i + 1 < len(target) else 0
        if want != size:
            stride = 0
        sizes[i], strides[i] = want, stride
    return t.as_strided(sizes, strides, t.storage_offset())
