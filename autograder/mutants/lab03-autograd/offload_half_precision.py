# Mutant: a "compact form" that stores floating-point tensors in float16, so gradients are no longer exact
# replaces: offload_saved_tensors
# must fail: test_offload_saved_tensors, hidden_offload_saved_tensors
import torch


def offload_saved_tensors():
    def pack(t):
        small = t.to("cpu", torch.float16, copy=True) if t.is_floating_point() else t.to("cpu", copy=True)
        return t.device, t.dtype, small

    def unpack(packed):
        device, dtype, small = packed
        return small.to(device, dtype)

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)
