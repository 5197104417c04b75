# Mutant: asks torch's observers for the answer instead of computing it
# replaces: choose_qparams
# must fail: test_choose_qparams, hidden_choose_qparams


def choose_qparams(x, dtype, symmetric, axis=None):
    from torch.ao.quantization.observer import MinMaxObserver, PerChannelMinMaxObserver

    if dtype not in (torch.qint8, torch.quint8):
        raise ValueError(f"unsupported dtype {dtype}")
    if axis is None:
        obs = MinMaxObserver(dtype=dtype, qscheme=torch.per_tensor_symmetric if symmetric else torch.per_tensor_affine)
        obs(x)
        scale, zero_point = obs.calculate_qparams()
        return float(scale), int(zero_point)
    obs = PerChannelMinMaxObserver(ch_axis=axis % x.dim(), dtype=dtype,
                                   qscheme=torch.per_channel_symmetric if symmetric else torch.per_channel_affine)
    obs(x)
    scale, zero_point = obs.calculate_qparams()
    return scale.float(), zero_point.long()
