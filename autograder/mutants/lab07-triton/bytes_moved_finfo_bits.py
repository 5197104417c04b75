# Mutant: takes the element size from torch.finfo(dtype).bits, which only exists for floating dtypes
# replaces: bytes_moved
# must fail: hidden_bytes_moved


def bytes_moved(chain, n, dtype, fused):
    chain = list(chain)
    if any(a not in (1, 2) for a in chain) or n < 0:
        raise ValueError("bad chain or n")
    if not chain:
        return 0
    size = torch.finfo(dtype).bits // 8
    if fused:
        return (1 + chain.count(2) + 1) * n * size
    return sum(a + 1 for a in chain) * n * size
