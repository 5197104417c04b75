# Mutant: forgets the eps floor on the scale (an all-zero or tiny-range tensor breaks)
# replaces: choose_qparams
# must fail: hidden_choose_qparams


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
    lo, hi = torch.clamp(lo, max=0.0), torch.clamp(hi, min=0.0)
    if symmetric:
        scale = torch.maximum(-lo, hi) / ((qmax - qmin) / 2)
        zero_point = torch.full(scale.shape, 0 if dtype == torch.qint8 else 128, dtype=torch.int64)
    else:
        scale = (hi - lo) / float(qmax - qmin)
        zero_point = torch.clamp(qmin - torch.nan_to_num(torch.round(lo / scale)).to(torch.int64), qmin, qmax)
    if axis is None:
        return float(scale), int(zero_point)
    return scale, zero_point
