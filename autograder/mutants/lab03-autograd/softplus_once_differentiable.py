# Mutant: marks backward @once_differentiable, so the second derivative is missing
# replaces: StableSoftplus
# must fail: hidden_StableSoftplus
import torch
from torch.autograd.function import once_differentiable


class StableSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
