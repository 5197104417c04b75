# Mutant: forgets the storage offset
# replaces: flat_index
# must fail: test_flat_index, hidden_flat_index


def flat_index(index, strides, offset=0):
    index, strides = tuple(index), tuple(strides)
    if len(index) != len(strides):
        raise IndexError(f"index has {len(index)} entries but there are {len(strides)} strides")
    return sum(int(i) * int(s) for i, s in zip(index, strides))
