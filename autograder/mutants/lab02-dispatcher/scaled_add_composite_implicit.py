# Mutant: registers the math as CompositeImplicitAutograd (no fake, no formula needed) instead of a CPU kernel
# replaces: register_scaled_add
# must fail: test_register_scaled_add, hidden_register_scaled_add


def register_scaled_add():
    lib = fresh_library("lab02")
    lib.define("scaled_add(Tensor a, Tensor b, float alpha) -> Tensor")

    def composite(a, b, alpha):
        return torch.add(a, b, alpha=alpha)

    torch.library.impl("lab02::scaled_add", "CompositeImplicitAutograd", composite, lib=lib)
    return torch.ops.lab02.scaled_add
