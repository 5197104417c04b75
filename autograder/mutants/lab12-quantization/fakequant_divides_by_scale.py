# Mutant: divides by scale instead of multiplying by its float32 reciprocal (differs next to ties)
# replaces: FakeQuantSTE
# must fail: hidden_FakeQuantSTE


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max):
        scale = torch.tensor(scale, dtype=torch.float32)
        q = torch.round(x / scale) + zero_point
        ctx.save_for_backward((q >= quant_min) & (q <= quant_max))
        return (q.clamp(quant_min, quant_max) - zero_point) * scale

    @staticmethod
    def backward(ctx, grad_output):
        (inside,) = ctx.saved_tensors
        return grad_output * inside, None, None, None, None
