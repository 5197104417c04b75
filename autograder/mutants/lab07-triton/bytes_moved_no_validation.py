# Mutant: never validates the arities or n (any arity counts as its value)
# replaces: bytes_moved
# must fail: hidden_bytes_moved


def bytes_moved(chain, n, dtype, fused):
    chain = list(chain)
    if not chain:
        return 0
    size = torch.empty((), dtype=dtype).element_size()
    if fused:
        return (1 + sum(a - 1 for a in chain) + 1) * n * size
    return sum(a + 1 for a in chain) * n * size
