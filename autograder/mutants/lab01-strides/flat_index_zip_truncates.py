# Mutant: zips index and strides without checking their lengths, so a wrong-length index gives a number
# replaces: flat_index
# must fail: hidden_flat_index


def flat_index(index, strides, offset=0):
    return int(offset) + sum(int(i) * int(s) for i, s in zip(index, strides))
