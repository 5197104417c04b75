# Mutant: uses max(x, 0) + log1p(exp(-x)), forgetting the absolute value: overflows for large negative x
# replaces: StableSoftplus
# must fail: test_StableSoftplus, hidden_StableSoftplus
import torch


class StableSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log1p(torch.exp(-x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
