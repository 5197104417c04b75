# Mutant: packs with t.to("cpu"), which returns the very same tensor when t is already on the CPU
# replaces: offload_saved_tensors
# must fail: test_offload_saved_tensors, hidden_offload_saved_tensors
import torch


def offload_saved_tensors():
    def pack(t):
        return t.device, t.to("cpu")

    def unpack(packed):
        device, t = packed
        return t.to(device)

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)
