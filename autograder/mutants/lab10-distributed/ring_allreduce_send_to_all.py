# Mutant: sends the whole tensor to every other rank and sums what arrives: right values, W-1 times the traffic
# replaces: ring_allreduce
# must fail: test_ring_allreduce, hidden_ring_allreduce


def ring_allreduce(tensor, group=None):
    world = dist.get_world_size(group)
    me = dist.get_rank(group)
    flat = tensor.detach().reshape(-1).clone()
    total = flat.clone()
    for other in range(world):
        if other == me:
            continue
        incoming = torch.empty_like(flat)
        if me < other:
            dist.send(flat, group=group, group_dst=other)
            dist.recv(incoming, group=group, group_src=other)
        else:
            dist.recv(incoming, group=group, group_src=other)
            dist.send(flat, group=group, group_dst=other)
        total += incoming
    tensor.copy_(total.view(tensor.shape))
    return tensor
