# Mutant: skips sending empty chunks but still waits to receive them: a rank never sends, its neighbour hangs
# replaces: ring_allreduce
# must fail: test_ring_allreduce, hidden_ring_allreduce


def ring_allreduce(tensor, group=None):
    world = dist.get_world_size(group)
    me = dist.get_rank(group)
    if world == 1 or tensor.numel() == 0:
        return tensor
    right, left = (me + 1) % world, (me - 1) % world
    flat = tensor.detach().reshape(-1).clone()
    chunks = torch.tensor_split(flat, world)

    def pass_along(outgoing, incoming):
        pending = dist.irecv(incoming, group=group, group_src=left)
        if outgoing.numel():  # "nothing to send"
            dist.send(outgoing, group=group, group_dst=right)
        pending.wait()

    for step in range(world - 1):
        mine, theirs = (me - step) % world, (me - step - 1) % world
        received = torch.empty_like(chunks[theirs])
        pass_along(chunks[mine], received)
        chunks[theirs].add_(received)
    for step in range(world - 1):
        pass_along(chunks[(me + 1 - step) % world], chunks[(me - step) % world])
    tensor.copy_(flat.view(tensor.shape))
    return tensor
