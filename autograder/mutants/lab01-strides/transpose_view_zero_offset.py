# Mutant: passes storage_offset=0 to as_strided, so views that start inside their storage move
# replaces: transpose_view
# must fail: hidden_transpose_view


def transpose_view(t, dim0, dim1):
    rank = max(t.dim(), 1)
    for d in (dim0, dim1):
        if not -rank <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})")
    d0, d1 = dim0 % rank, dim1 % rank
    sizes, strides = list(t.shape), list(t.stride())
    if t.dim() > 0:
        sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
        strides[d0], strides[d1] = strides[d1], strides[d0]
    return t.as_strided(sizes, strides, 0)
