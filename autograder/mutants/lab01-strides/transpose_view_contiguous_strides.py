# Mutant: recomputes row-major strides for the new shape instead of swapping t's own strides
# replaces: transpose_view
# must fail: test_transpose_view, hidden_transpose_view


def transpose_view(t, dim0, dim1):
    sizes = list(t.shape)
    sizes[dim0], sizes[dim1] = sizes[dim1], sizes[dim0]
    strides, step = [], 1
    for size in reversed(sizes):
        strides.insert(0, step)
        step *= max(size, 1)
    return t.as_strided(sizes, strides, t.storage_offset())
