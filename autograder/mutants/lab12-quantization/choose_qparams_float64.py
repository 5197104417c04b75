# Mutant: computes scale and zero point with Python floats (float64), rounding to float32 only at the end
# replaces: choose_qparams
# must fail: hidden_choose_qparams


def choose_qparams(x, dtype, symmetric, axis=None):
    if dtype not in (torch.qint8, torch.quint8):
        raise ValueError(f"unsupported dtype {dtype}")
    qmin, qmax = (-128, 127) if dtype == torch.qint8 else (0, 255)
    eps = float(torch.finfo(torch.float32).eps)

    def one(values):
        lo, hi = min(float(values.min()), 0.0), max(float(values.max()), 0.0)
        if symmetric:
            scale = float(torch.tensor(max(max(-lo, hi) / ((qmax - qmin) / 2), eps), dtype=torch.float32))
            return scale, 0 if dtype == torch.qint8 else 128
        scale = float(torch.tensor(max((hi - lo) / (qmax - qmin), eps), dtype=torch.float32))
        return scale, min(max(qmin - round(lo / scale), qmin), qmax)

    x = x.detach().float()
    if axis is None:
        return (1.0, 0) if x.numel() == 0 else one(x)
    rows = x.movedim(axis % x.dim(), 0).reshape(x.shape[axis], -1)
    pairs = [one(row) for row in rows]
    return (torch.tensor([p[0] for p in pairs], dtype=torch.float32),
            torch.tensor([p[1] for p in pairs], dtype=torch.int64))
