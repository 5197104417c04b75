# Mutant: stops after the reduce-scatter phase, so each rank has only one chunk's full sum
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
        pending = dist.irecv(received, group=group, group_src=left)
        dist.send(chunks[mine], group=group, group_dst=right)
        pending.wait()
        chunks[theirs].add_(received)
    tensor.copy_(flat.view(tensor.shape))
    return tensor
