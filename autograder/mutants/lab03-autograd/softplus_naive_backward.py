# Mutant: stable forward, but the derivative is exp(x) / (1 + exp(x)), which is inf / inf = nan for large x
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
        e = torch.exp(x)
        return grad_output * e / (1 + e)
