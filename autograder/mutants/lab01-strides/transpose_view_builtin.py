# Mutant: calls the built-in it was asked to rebuild
# replaces: transpose_view
# must fail: test_transpose_view, hidden_transpose_view


def transpose_view(t, dim0, dim1):
    return t.transpose(dim0, dim1)
