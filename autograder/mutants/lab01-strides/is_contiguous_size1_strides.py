# Mutant: compares every stride with the row-major strides, size-1 dims included
# replaces: is_contiguous
# must fail: hidden_is_contiguous


def is_contiguous(shape, strides):
    shape, strides = tuple(shape), tuple(strides)
    if 0 in shape:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if stride != expected:
            return False
        expected *= size
    return True
