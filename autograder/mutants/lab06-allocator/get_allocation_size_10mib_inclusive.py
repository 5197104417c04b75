# Mutant: get_allocation_size gives a 20 MiB segment up to 10 MiB inclusive (<= kMinLargeAlloc instead of <)
# replaces: get_allocation_size
# must fail: test_get_allocation_size, hidden_get_allocation_size


def get_allocation_size(size):
    if size <= kSmallSize:
        return kSmallBuffer
    if size <= kMinLargeAlloc:
        return kLargeBuffer
    return -(-size // kRoundLarge) * kRoundLarge
