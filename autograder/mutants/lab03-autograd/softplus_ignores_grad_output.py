# Mutant: backward returns sigmoid(x) and forgets to multiply by grad_output
# replaces: StableSoftplus
# must fail: test_StableSoftplus, hidden_StableSoftplus
import torch


class StableSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return torch.sigmoid(x)
