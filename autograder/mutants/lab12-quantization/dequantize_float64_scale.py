# Mutant: multiplies by the Python float scale in float64 and rounds to float32 at the end
# replaces: dequantize
# must fail: test_dequantize, hidden_dequantize


def dequantize(q, scale, zero_point, axis=None):
    scale = torch.as_tensor(scale, dtype=torch.float64)
    zero_point = torch.as_tensor(zero_point, dtype=torch.int64)
    if axis is not None:
        shape = [1] * q.dim()
        shape[axis] = -1
        scale, zero_point = scale.reshape(shape), zero_point.reshape(shape)
    return ((q.to(torch.int64) - zero_point).to(torch.float64) * scale).to(torch.float32)
