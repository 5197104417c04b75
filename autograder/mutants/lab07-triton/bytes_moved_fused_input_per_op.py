# Mutant: fused, counts one fresh input for every op, unary ones included
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
        return (1 + len(chain) + 1) * n * size
    return sum(a + 1 for a in chain) * n * size
