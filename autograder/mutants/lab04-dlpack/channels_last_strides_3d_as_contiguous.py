# Mutant: handles 4-D only and gives 5-D shapes plain row-major strides (channels_last_3d forgotten)
# replaces: channels_last_strides
# must fail: test_channels_last_strides, hidden_channels_last_strides


def channels_last_strides(shape):
    shape = tuple(int(s) for s in shape)
    if len(shape) == 4:
        _, c, h, w = shape
        return (h * w * c, 1, w * c, c)
    if len(shape) == 5:
        strides, step = [], 1
        for size in reversed(shape):
            strides.insert(0, step)
            step *= max(size, 1)
        return tuple(strides)
    raise RuntimeError(f"channels_last needs a 4-D shape, got {shape}")
