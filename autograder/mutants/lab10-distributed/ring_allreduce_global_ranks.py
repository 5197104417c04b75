# Mutant: uses global ranks for the neighbours, so a subgroup's ring sends to ranks outside the group
# replaces: ring_allreduce
# must fail: hidden_ring_allreduce


def ring_allreduce(tensor, group=None):
    world = dist.get_world_size(group)
    me = dist.get_rank()
    if world == 1 or tensor.numel() == 0:
        return tensor
    right, left = (me + 1) % world, (me - 1) % world
    flat = tensor.detach().reshape(-1).clone()
    chunks = torch.tensor_split(flat, world)

    def pass_along(outgoing, incoming):
        pending = dist.irecv(incoming, src=left, group=group)
        dist.send(outgoing, dst=right, group=group)
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
