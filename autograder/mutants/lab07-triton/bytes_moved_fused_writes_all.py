# Mutant: the fused count still writes every intermediate result, as if each op stored its output
# replaces: bytes_moved
# must fail: test_bytes_moved, hidden_bytes_moved


def bytes_moved(chain, n, dtype, fused):
    chain = list(chain)
    if any(a not in (1, 2) for a in chain) or n < 0:
        raise ValueError("bad chain or n")
    if not chain:
        return 0
    size = torch.empty((), dtype=dtype).element_size()
    if fused:
        return (1 + chain.count(2) + len(chain)) * n * size
    return sum(a + 1 for a in chain) * n * size
