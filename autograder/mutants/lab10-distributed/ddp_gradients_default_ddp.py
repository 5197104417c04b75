# Mutant: wraps the model in DDP with its defaults, so a parameter forward never uses blocks the all-reduce
# replaces: ddp_gradients
# must fail: hidden_ddp_gradients


def ddp_gradients(model_fn, data, world_size):
    def one_rank(rank, world_size):
        model = model_fn()
        ddp = DDP(model)
        ddp(*(t.chunk(world_size)[rank] for t in data)).backward()
        return [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()]

    return run_ranks(one_rank, world_size)[0]
