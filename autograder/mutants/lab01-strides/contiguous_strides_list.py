# Mutant: right numbers, but returns a list instead of a tuple
# replaces: contiguous_strides
# must fail: test_contiguous_strides, hidden_contiguous_strides


def contiguous_strides(shape):
    strides = []
    step = 1
    for size in reversed(tuple(shape)):
        strides.insert(0, step)
        step *= max(int(size), 1)
    return strides
