# Mutant: calls the built-in it was asked to rebuild
# replaces: unfold_windows
# must fail: test_unfold_windows, hidden_unfold_windows


def unfold_windows(t, dim, size, step):
    return t.unfold(dim, size, step)
