# Mutant: one split rule for both pools: split only when more than 1 MiB would remain
# replaces: CachingAllocatorSim
# must fail: test_split_and_merge
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _should_split(self, block, size):
        return size < self.max_split_size and block.size - size > kSmallSize
