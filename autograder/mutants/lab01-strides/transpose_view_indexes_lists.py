# Mutant: indexes the size/stride lists with the dims directly, so a 0-d tensor raises
# replaces: transpose_view
# must fail: hidden_transpose_view


def transpose_view(t, dim0, dim1):
    sizes, strides = list(t.shape), list(t.stride())
    sizes[dim0], sizes[dim1] = sizes[dim1], sizes[dim0]
    strides[dim0], strides[dim1] = strides[dim1], strides[dim0]
    return t.as_strided(sizes, strides, t.storage_offset())
