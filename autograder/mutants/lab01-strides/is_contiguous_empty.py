# Mutant: no special case for tensors with no elements
# replaces: is_contiguous
# must fail: hidden_is_contiguous


def is_contiguous(shape, strides):
    expected = 1
    for size, stride in zip(reversed(tuple(shape)), reversed(tuple(strides))):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True
