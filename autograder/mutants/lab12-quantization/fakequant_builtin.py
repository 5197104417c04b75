# Mutant: the forward calls torch.fake_quantize_per_tensor_affine
# replaces: FakeQuantSTE
# must fail: test_FakeQuantSTE, hidden_FakeQuantSTE


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max):
        q = torch.round(x * torch.reciprocal(torch.tensor(scale, dtype=torch.float32))) + zero_point
        ctx.save_for_backward((q >= quant_min) & (q <= quant_max))
        return torch.fake_quantize_per_tensor_affine(x, scale, zero_point, quant_min, quant_max)

    @staticmethod
    def backward(ctx, grad_output):
        (inside,) = ctx.saved_tensors
        return grad_output * inside, None, None, None, None
