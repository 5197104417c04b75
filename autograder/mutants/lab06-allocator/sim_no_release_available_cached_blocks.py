# Mutant: with max_split_size set, malloc skips release_available_cached_blocks and goes straight to the full retry
# replaces: CachingAllocatorSim
# must fail: hidden_oom_and_empty_cache
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _release_available_cached_blocks(self, is_small, stream, size):
        return False
