# Mutant: converts to the integer type without rounding (truncation toward zero)
# replaces: quantize
# must fail: test_quantize, hidden_quantize


def quantize(x, scale, zero_point, dtype, axis=None):
    if dtype not in (torch.qint8, torch.quint8):
        raise ValueError(f"unsupported dtype {dtype}")
    qmin, qmax = (-128, 127) if dtype == torch.qint8 else (0, 255)
    int_dtype = torch.int8 if dtype == torch.qint8 else torch.uint8
    scale = torch.as_tensor(scale, dtype=torch.float32)
    zero_point = torch.as_tensor(zero_point, dtype=torch.float32)
    if axis is not None:
        shape = [1] * x.dim()
        shape[axis] = -1
        scale, zero_point = scale.reshape(shape), zero_point.reshape(shape)
    return (x * torch.reciprocal(scale) + zero_point).clamp(qmin, qmax).to(int_dtype)
