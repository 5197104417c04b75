# Mutant: peaks are tracked for "all" only; the small_pool and large_pool peaks stay 0
# replaces: CachingAllocatorSim
# must fail: test_memory_stats, hidden_memory_stats
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _increase(self, family, is_small, amount):
        everything, pool = self._stats[family][0], self._stats[family][1 if is_small else 2]
        everything[0] += amount
        everything[1] = max(everything[1], everything[0])
        everything[2] += amount
        pool[0] += amount
        pool[2] += amount
