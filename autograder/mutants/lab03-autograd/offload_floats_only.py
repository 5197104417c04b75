# Mutant: copies only floating-point tensors and keeps integer indices and bool masks as they are (no copy)
# replaces: offload_saved_tensors
# must fail: hidden_offload_saved_tensors
import torch


def offload_saved_tensors():
    def pack(t):
        if not t.is_floating_point():
            return None, t  # "small anyway"
        return t.device, t.to("cpu", copy=True)

    def unpack(packed):
        device, t = packed
        return t if device is None else t.to(device)

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)
