# Mutant: computes sigmoid(x) in forward and stashes it on ctx: first derivatives right, but autograd cannot
# differentiate the backward (the stashed tensor is a constant to it), so gradgradcheck fails
# replaces: StableSoftplus
# must fail: hidden_StableSoftplus
import torch


class StableSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.sig = torch.sigmoid(x)
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.sig
