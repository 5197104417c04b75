# Mutant: assumes 4-byte elements (float32) whatever the dtype
# replaces: bytes_moved
# must fail: hidden_bytes_moved


def bytes_moved(chain, n, dtype, fused):
    chain = list(chain)
    if any(a not in (1, 2) for a in chain) or n < 0:
        raise ValueError("bad chain or n")
    if not chain:
        return 0
    if fused:
        return (1 + chain.count(2) + 1) * n * 4
    return sum(a + 1 for a in chain) * n * 4
