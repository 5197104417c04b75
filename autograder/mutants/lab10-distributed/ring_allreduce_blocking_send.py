# Mutant: every rank calls the blocking dist.send before dist.recv (gloo's send waits for the peer's recv: deadlock)
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
    for step in range(world - 1):
        mine, theirs = (me - step) % world, (me - step - 1) % world
        received = torch.empty_like(chunks[theirs])
        dist.send(chunks[mine], group=group, group_dst=right)
        dist.recv(received, group=group, group_src=left)
        chunks[theirs].add_(received)
    for step in range(world - 1):
        dist.send(chunks[(me + 1 - step) % world], group=group, group_dst=right)
        dist.recv(chunks[(me - step) % world], group=group, group_src=left)
    tensor.copy_(flat.view(tensor.shape))
    return tensor
