# Mutant: returns an object that claims to equal anything (plain `==` tests would pass it)
# replaces: contiguous_strides
# must fail: test_contiguous_strides, hidden_contiguous_strides


class _EqualsAnything(tuple):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = tuple.__hash__


def contiguous_strides(shape):
    return _EqualsAnything()
