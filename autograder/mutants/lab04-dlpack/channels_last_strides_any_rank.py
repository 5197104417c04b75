# Mutant: generalizes "channels last" to every rank instead of raising for shapes that are not 4-D or 5-D
# replaces: channels_last_strides
# must fail: hidden_channels_last_strides


def channels_last_strides(shape):
    shape = [int(s) for s in shape]
    if len(shape) < 2:
        return tuple(1 for _ in shape)
    c = shape[1]
    strides = [0] * len(shape)
    strides[1] = 1
    step = c
    for d in reversed(range(2, len(shape))):
        strides[d] = step
        step *= shape[d]
    strides[0] = step
    return tuple(strides)
