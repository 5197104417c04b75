# Mutant: saves a flattened copy to save space and forgets to restore the shape in unpack
# replaces: offload_saved_tensors
# must fail: test_offload_saved_tensors, hidden_offload_saved_tensors
import torch


def offload_saved_tensors():
    def pack(t):
        return t.device, t.detach().to("cpu", copy=True).reshape(-1)

    def unpack(packed):
        device, flat = packed
        return flat.to(device)

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)
