# Mutant: counts a size-0 dim as 1, as contiguous strides do (torch's channels_last strides do not)
# replaces: channels_last_strides
# must fail: hidden_channels_last_strides


def channels_last_strides(shape):
    shape = tuple(max(int(s), 1) for s in shape)
    if len(shape) == 4:
        _, c, h, w = shape
        return (h * w * c, 1, w * c, c)
    if len(shape) == 5:
        _, c, d, h, w = shape
        return (d * h * w * c, 1, h * w * c, w * c, c)
    raise RuntimeError(f"channels_last needs a 4-D or 5-D shape, got {shape}")
