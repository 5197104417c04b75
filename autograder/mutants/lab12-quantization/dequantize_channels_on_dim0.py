# Mutant: per channel, always broadcasts along dim 0, whatever `axis` says
# replaces: dequantize
# must fail: hidden_dequantize


def dequantize(q, scale, zero_point, axis=None):
    scale = torch.as_tensor(scale, dtype=torch.float32)
    zero_point = torch.as_tensor(zero_point, dtype=torch.int32)
    if axis is not None:
        shape = [-1] + [1] * (q.dim() - 1)
        scale, zero_point = scale.reshape(shape), zero_point.reshape(shape)
    return (q.to(torch.int32) - zero_point).to(torch.float32) * scale
