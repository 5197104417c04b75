# Mutant: get_allocation_size gives 2 MiB only below 1 MiB (< kSmallSize), so a 1 MiB request gets 20 MiB
# replaces: get_allocation_size
# must fail: hidden_get_allocation_size


def get_allocation_size(size):
    if size < kSmallSize:
        return kSmallBuffer
    if size < kMinLargeAlloc:
        return kLargeBuffer
    return -(-size // kRoundLarge) * kRoundLarge
