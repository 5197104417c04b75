# Mutant: computes the full-batch gradients in one process, assuming that is what DDP gives
# replaces: ddp_gradients
# must fail: hidden_ddp_gradients


def ddp_gradients(model_fn, data, world_size):
    model = model_fn()
    model(*data).backward()
    return [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()]
