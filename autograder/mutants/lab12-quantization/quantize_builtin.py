# Mutant: calls torch's quantize kernels and reads back int_repr()
# replaces: quantize
# must fail: test_quantize, hidden_quantize


def quantize(x, scale, zero_point, dtype, axis=None):
    if dtype not in (torch.qint8, torch.quint8):
        raise ValueError(f"unsupported dtype {dtype}")
    if axis is None:
        return torch.quantize_per_tensor(x, float(scale), int(zero_point), dtype).int_repr()
    return torch.quantize_per_channel(x, scale.double(), zero_point.long(), axis % x.dim(), dtype).int_repr()
