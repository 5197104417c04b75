# Mutant: returns zeros for a parameter without a gradient, where DDP leaves .grad None
# replaces: ddp_gradients
# must fail: hidden_ddp_gradients


def ddp_gradients(model_fn, data, world_size):
    def one_rank(rank, world_size):
        model = model_fn()
        ddp = DDP(model, find_unused_parameters=True)
        ddp(*(t.chunk(world_size)[rank] for t in data)).backward()
        return [torch.zeros_like(p) if p.grad is None else p.grad.detach().clone() for p in model.parameters()]

    return run_ranks(one_rank, world_size)[0]
