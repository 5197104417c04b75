# Mutant: the large pool splits when at least 1 MiB remains (>= kSmallSize instead of > kSmallSize)
# replaces: CachingAllocatorSim
# must fail: test_split_and_merge, hidden_split_and_merge
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _should_split(self, block, size):
        remaining = block.size - size
        if block.is_small:
            return remaining >= kMinBlockSize
        return size < self.max_split_size and remaining >= kSmallSize
