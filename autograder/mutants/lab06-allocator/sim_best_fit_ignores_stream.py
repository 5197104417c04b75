# Mutant: the best fit is searched by (size, address) over all streams: a block cached by another stream is reused
# replaces: CachingAllocatorSim
# must fail: test_reuse_and_streams, hidden_reuse_and_streams
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _get_free_block(self, is_small, stream, size):
        keys = [k for k in self._pool_keys[is_small] if k[1] >= size]
        if not keys:
            return None
        best = min(keys, key=lambda k: (k[1], k[2]))
        if size < self.max_split_size <= best[1] or (size >= self.max_split_size and best[1] >= size + kLargeBuffer):
            return None
        self._pool_keys[is_small].remove(best)
        return self._free_blocks.pop(best[2])
