# Mutant: uses the raw min and max of x, without stretching the range to include 0
# replaces: choose_qparams
# must fail: test_choose_qparams, hidden_choose_qparams


def choose_qparams(x, dtype, symmetric, axis=None):
    if dtype not in (torch.qint8, torch.quint8):
        raise ValueError(f"unsupported dtype {dtype}")
    qmin, qmax = (-128, 127) if dtype == torch.qint8 else (0, 255)
    x = x.detach().float()
    if axis is None:
        if x.numel() == 0:
            return 1.0, 0
        lo, hi = torch.aminmax(x)
    else:
        axis %= x.dim()
        lo, hi = torch.aminmax(x.movedim(axis, 0).reshape(x.shape[axis], -1), dim=1)
    eps = torch.tensor(torch.finfo(torch.float32).eps)
    if symmetric:
        scale = torch.maximum(torch.maximum(lo.abs(), hi.abs()) / ((qmax - qmin) / 2), eps)
        zero_point = torch.full(scale.shape, 0 if dtype == torch.qint8 else 128, dtype=torch.int64)
    else:
        scale = torch.maximum((hi - lo) / float(qmax - qmin), eps)
        zero_point = torch.clamp(qmin - torch.round(lo / scale).to(torch.int64), qmin, qmax)
    if axis is None:
        return float(scale), int(zero_point)
    return scale, zero_point
