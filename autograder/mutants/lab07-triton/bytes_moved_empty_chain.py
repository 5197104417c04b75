# Mutant: an empty fused chain still "reads x and writes the output" (2n elements) instead of running nothing
# replaces: bytes_moved
# must fail: hidden_bytes_moved


def bytes_moved(chain, n, dtype, fused):
    chain = list(chain)
    if any(a not in (1, 2) for a in chain) or n < 0:
        raise ValueError("bad chain or n")
    size = torch.empty((), dtype=dtype).element_size()
    if fused:
        return (1 + chain.count(2) + 1) * n * size
    return sum(a + 1 for a in chain) * n * size
