# Mutant: calls the built-in torch.nn.functional.softplus (and its derivative) instead of writing the formula
# replaces: StableSoftplus
# must fail: test_StableSoftplus, hidden_StableSoftplus
import torch
import torch.nn.functional as F


class StableSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return F.softplus(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
