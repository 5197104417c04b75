# Mutant: forward is log1p(exp(x)) as written, which overflows to inf for large x
# replaces: StableSoftplus
# must fail: test_StableSoftplus, hidden_StableSoftplus
import torch


class StableSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log1p(torch.exp(x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
