# Mutant: "contiguous" taken to mean the strides decrease from left to right and end in 1
# replaces: is_contiguous
# must fail: test_is_contiguous, hidden_is_contiguous


def is_contiguous(shape, strides):
    shape, strides = tuple(shape), tuple(strides)
    if 0 in shape:
        return True
    kept = [s for size, s in zip(shape, strides) if size != 1]
    if not kept:
        return True
    return kept[-1] == 1 and all(a > b for a, b in zip(kept, kept[1:]))
