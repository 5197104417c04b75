# Mutant: hands the work to torch's own engine (torch.autograd.grad) instead of calling the nodes
# replaces: backward
# must fail: test_backward, hidden_backward
import torch


def backward(outputs, inputs, grad_outputs):
    return torch.autograd.grad(outputs, inputs, grad_outputs, retain_graph=True, allow_unused=True,
                               materialize_grads=True)
