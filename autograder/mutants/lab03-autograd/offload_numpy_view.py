# Mutant: packs to a NumPy array with t.detach().cpu().numpy(), which shares memory with a CPU tensor
# replaces: offload_saved_tensors
# must fail: test_offload_saved_tensors, hidden_offload_saved_tensors
import torch


def offload_saved_tensors():
    def pack(t):
        return t.device, t.detach().cpu().numpy()

    def unpack(packed):
        device, array = packed
        return torch.from_numpy(array).to(device)

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)
