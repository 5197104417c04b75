# Mutant: computes in float64 for accuracy and forgets to cast the result back to the input's dtype
# replaces: StableSoftplus
# must fail: test_StableSoftplus, hidden_StableSoftplus
import torch


class StableSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x = x.double()
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
