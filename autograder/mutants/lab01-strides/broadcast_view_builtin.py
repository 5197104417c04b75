# Mutant: calls the built-in it was asked to rebuild
# replaces: broadcast_view
# must fail: test_broadcast_view, hidden_broadcast_view


def broadcast_view(t, shape):
    return t.expand(shape)
