# Mutant: pack and unpack hand the tensor through unchanged (nothing is copied or moved)
# replaces: offload_saved_tensors
# must fail: test_offload_saved_tensors, hidden_offload_saved_tensors
import torch


def offload_saved_tensors():
    return torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
