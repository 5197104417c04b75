# Mutant: treats strides as distances and takes their absolute value
# replaces: flat_index
# must fail: hidden_flat_index


def flat_index(index, strides, offset=0):
    index, strides = tuple(index), tuple(strides)
    if len(index) != len(strides):
        raise IndexError(f"index has {len(index)} entries but there are {len(strides)} strides")
    return int(offset) + sum(int(i) * abs(int(s)) for i, s in zip(index, strides))
