# Mutant: calls the collective it was asked to rebuild
# replaces: ring_allreduce
# must fail: test_ring_allreduce, hidden_ring_allreduce


def ring_allreduce(tensor, group=None):
    dist.all_reduce(tensor, group=group)
    return tensor
