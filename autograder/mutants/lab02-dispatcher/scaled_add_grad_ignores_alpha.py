# Mutant: the gradient for b forgets the factor alpha
# replaces: register_scaled_add
# must fail: test_register_scaled_add, hidden_register_scaled_add


def register_scaled_add():
    lib = fresh_library("lab02")
    lib.define("scaled_add(Tensor a, Tensor b, float alpha) -> Tensor")

    def cpu(a, b, alpha):
        out = a.new_empty(torch.broadcast_shapes(a.shape, b.shape), dtype=torch.result_type(a, b))
        return torch.add(a, b, alpha=alpha, out=out)

    def fake(a, b, alpha):
        return a.new_empty(torch.broadcast_shapes(a.shape, b.shape), dtype=torch.result_type(a, b))

    def setup_context(ctx, inputs, output):
        pass

    def backward(ctx, grad):
        return grad, grad, None

    torch.library.impl("lab02::scaled_add", "CPU", cpu, lib=lib)
    torch.library.register_fake("lab02::scaled_add", fake, lib=lib)
    torch.library.register_autograd("lab02::scaled_add", backward, setup_context=setup_context, lib=lib)
    return torch.ops.lab02.scaled_add
