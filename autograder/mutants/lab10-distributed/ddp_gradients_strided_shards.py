# Mutant: gives rank r every world_size-th row (t[r::world_size]) instead of the r-th block of rows
# replaces: ddp_gradients
# must fail: hidden_ddp_gradients


def ddp_gradients(model_fn, data, world_size):
    def one_rank(rank, world_size):
        model = model_fn()
        ddp = DDP(model, find_unused_parameters=True)
        ddp(*(t[rank::world_size] for t in data)).backward()
        return [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()]

    return run_ranks(one_rank, world_size)[0]
