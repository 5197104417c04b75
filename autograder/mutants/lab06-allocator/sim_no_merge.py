# Mutant: free puts the block back in its pool without merging it with its free neighbours
# replaces: CachingAllocatorSim
# must fail: test_split_and_merge, hidden_split_and_merge
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _try_merge_blocks(self, block, neighbour):
        return 0
