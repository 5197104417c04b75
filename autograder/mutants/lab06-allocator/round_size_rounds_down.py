# Mutant: round_size rounds to a multiple of 512 with floor division (down), not up
# replaces: round_size
# must fail: test_round_size, hidden_round_size


def round_size(size, divisions=0):
    if size < 0 or divisions < 0 or divisions & (divisions - 1):
        raise ValueError("bad size or divisions")
    if size < 512:
        return 512
    if divisions > 1 and size > 512 * divisions:
        if size & (size - 1) == 0:
            return size
        step = (1 << (size.bit_length() - 1)) // divisions
        return -(-size // step) * step
    return size // 512 * 512
