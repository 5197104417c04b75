# Mutant: registers the hooks as soon as it is called (entering them by hand) and never removes them
# replaces: offload_saved_tensors
# must fail: test_offload_saved_tensors, hidden_offload_saved_tensors
import contextlib

import torch


def offload_saved_tensors():
    def pack(t):
        return t.device, t.to("cpu", copy=True)

    def unpack(packed):
        device, t = packed
        return t.to(device)

    torch.autograd.graph.saved_tensors_hooks(pack, unpack).__enter__()
    return contextlib.nullcontext()
