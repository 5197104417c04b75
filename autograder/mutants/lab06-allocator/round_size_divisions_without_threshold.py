# Mutant: round_size applies the power-of-two steps to every size when divisions > 1 (forgets size > 512 * divisions)
# replaces: round_size
# must fail: hidden_round_size


def round_size(size, divisions=0):
    if size < 0 or divisions < 0 or divisions & (divisions - 1):
        raise ValueError("bad size or divisions")
    if size < 512:
        return 512
    if divisions > 1:
        if size & (size - 1) == 0:
            return size
        step = (1 << (size.bit_length() - 1)) // divisions
        return -(-size // step) * step
    return -(-size // 512) * 512
