# Mutant: unfused, every op reads one tensor and writes one, forgetting the fresh input of a binary op
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
        return (1 + chain.count(2) + 1) * n * size
    return 2 * len(chain) * n * size
