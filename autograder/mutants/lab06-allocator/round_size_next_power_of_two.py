# Mutant: with divisions, round_size rounds up to the next power of two (ignores how many divisions)
# replaces: round_size
# must fail: test_round_size, hidden_round_size


def round_size(size, divisions=0):
    if size < 0 or divisions < 0 or divisions & (divisions - 1):
        raise ValueError("bad size or divisions")
    if size < 512:
        return 512
    if divisions > 1 and size > 512 * divisions:
        return 1 << (size - 1).bit_length()
    return -(-size // 512) * 512
