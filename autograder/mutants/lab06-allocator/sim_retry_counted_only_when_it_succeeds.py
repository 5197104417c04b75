# Mutant: num_alloc_retries counts only the retries that succeed
# replaces: CachingAllocatorSim
# must fail: test_oom_and_empty_cache, hidden_oom_and_empty_cache
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _alloc_block(self, is_small, stream, alloc_size, is_retry):
        block = super()._alloc_block(is_small, stream, alloc_size, False)
        if is_retry and block is not None:
            self._counters["num_alloc_retries"] += 1
        return block
