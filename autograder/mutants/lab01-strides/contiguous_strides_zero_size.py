# Mutant: multiplies the raw sizes, so a size-0 dim zeroes every stride to its left
# replaces: contiguous_strides
# must fail: hidden_contiguous_strides


def contiguous_strides(shape):
    strides = []
    step = 1
    for size in reversed(tuple(shape)):
        strides.append(step)
        step *= int(size)
    return tuple(reversed(strides))
