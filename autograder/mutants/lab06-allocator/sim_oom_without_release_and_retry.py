# Mutant: when a new segment does not fit, malloc raises at once: no release of the cached segments, no retry
# replaces: CachingAllocatorSim
# must fail: test_oom_and_empty_cache
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _release_cached_blocks(self):
        return True

    def empty_cache(self):
        _Right._release_cached_blocks(self)
