# Mutant: asks torch for the answer instead of applying the rule (builds a tensor with these strides)
# replaces: is_contiguous
# must fail: test_is_contiguous, hidden_is_contiguous


def is_contiguous(shape, strides):
    return bool(torch.empty_strided(tuple(shape), tuple(strides)).is_contiguous())
