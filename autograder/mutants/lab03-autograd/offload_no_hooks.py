# Mutant: defines pack and unpack but returns a context that never registers them
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

    return contextlib.nullcontext((pack, unpack))
