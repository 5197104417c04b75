# Mutant: asks torch for the answer instead of computing it (allocates a tensor to read its strides)
# replaces: contiguous_strides
# must fail: test_contiguous_strides, hidden_contiguous_strides


def contiguous_strides(shape):
    return tuple(torch.empty(tuple(shape)).stride())
