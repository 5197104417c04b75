# Mutant: lists the strides in memory order N, H, W, C instead of in the shape's order N, C, H, W
# replaces: channels_last_strides
# must fail: test_channels_last_strides, hidden_channels_last_strides


def channels_last_strides(shape):
    shape = tuple(int(s) for s in shape)
    if len(shape) == 4:
        _, c, h, w = shape
        return (h * w * c, w * c, c, 1)
    if len(shape) == 5:
        _, c, d, h, w = shape
        return (d * h * w * c, h * w * c, w * c, c, 1)
    raise RuntimeError(f"channels_last needs a 4-D or 5-D shape, got {shape}")
