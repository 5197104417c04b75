# Mutant: all-reduces the gradients by hand with SUM and forgets that DDP averages over the ranks
# replaces: ddp_gradients
# must fail: test_ddp_gradients, hidden_ddp_gradients


def ddp_gradients(model_fn, data, world_size):
    def one_rank(rank, world_size):
        model = model_fn()
        model(*(t.chunk(world_size)[rank] for t in data)).backward()
        grads = []
        for p in model.parameters():
            if p.grad is None:
                grads.append(None)
                continue
            dist.all_reduce(p.grad)
            grads.append(p.grad.detach().clone())
        return grads

    return run_ranks(one_rank, world_size)[0]
