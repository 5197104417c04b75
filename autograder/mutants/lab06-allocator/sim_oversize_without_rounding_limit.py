# Mutant: an oversize cached block serves any request >= max_split_size, however much larger it is
# replaces: CachingAllocatorSim
# must fail: hidden_split_and_merge
import bisect as _bisect

_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _get_free_block(self, is_small, stream, size):
        keys = self._pool_keys[is_small]
        i = _bisect.bisect_left(keys, (stream, size, 0))
        if i == len(keys) or keys[i][0] != stream:
            return None
        if size < self.max_split_size <= keys[i][1]:
            return None
        return self._free_blocks.pop(keys.pop(i)[2])
