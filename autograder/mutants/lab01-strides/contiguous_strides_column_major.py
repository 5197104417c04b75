# Mutant: column-major (Fortran order) strides: the first dim gets stride 1
# replaces: contiguous_strides
# must fail: test_contiguous_strides, hidden_contiguous_strides


def contiguous_strides(shape):
    strides = []
    step = 1
    for size in tuple(shape):
        strides.append(step)
        step *= max(int(size), 1)
    return tuple(strides)
