# Mutant: asks torch for the answer (allocates a channels_last tensor and reads its strides)
# replaces: channels_last_strides
# must fail: test_channels_last_strides, hidden_channels_last_strides


def channels_last_strides(shape):
    shape = tuple(shape)
    fmt = torch.channels_last if len(shape) == 4 else torch.channels_last_3d
    return tuple(torch.empty(shape, memory_format=fmt).stride())
