# Mutant: returns the built-in torch.autograd.graph.save_on_cpu instead of writing pack and unpack
# replaces: offload_saved_tensors
# must fail: test_offload_saved_tensors
import torch


def offload_saved_tensors():
    return torch.autograd.graph.save_on_cpu()
