# Mutant: subtracts the zero point in the integer type of q (uint8 wraps around below the zero point)
# replaces: dequantize
# must fail: test_dequantize, hidden_dequantize


def dequantize(q, scale, zero_point, axis=None):
    scale = torch.as_tensor(scale, dtype=torch.float32)
    zero_point = torch.as_tensor(zero_point)
    if axis is not None:
        shape = [1] * q.dim()
        shape[axis] = -1
        scale, zero_point = scale.reshape(shape), zero_point.reshape(shape).to(q.dtype)
    return (q - zero_point).to(torch.float32) * scale
