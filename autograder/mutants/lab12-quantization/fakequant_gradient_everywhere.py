# Mutant: a pure straight-through gradient that also passes where the value was clamped
# replaces: FakeQuantSTE
# must fail: test_FakeQuantSTE, hidden_FakeQuantSTE


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max):
        scale = torch.tensor(scale, dtype=torch.float32)
        q = torch.round(x * torch.reciprocal(scale)) + zero_point
        return (q.clamp(quant_min, quant_max) - zero_point) * scale

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None, None, None, None
