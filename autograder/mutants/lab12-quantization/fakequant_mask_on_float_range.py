# Mutant: keeps the gradient where x lies in [(qmin - zp) * scale, (qmax - zp) * scale], before rounding
# replaces: FakeQuantSTE
# must fail: hidden_FakeQuantSTE


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max):
        scale = torch.tensor(scale, dtype=torch.float32)
        q = torch.round(x * torch.reciprocal(scale)) + zero_point
        ctx.save_for_backward((x >= (quant_min - zero_point) * scale) & (x <= (quant_max - zero_point) * scale))
        return (q.clamp(quant_min, quant_max) - zero_point) * scale

    @staticmethod
    def backward(ctx, grad_output):
        (inside,) = ctx.saved_tensors
        return grad_output * inside, None, None, None, None
