# Mutant: the best fit is found with bisect on (stream, size, address), but the found block's stream is not checked
# replaces: CachingAllocatorSim
# must fail: hidden_reuse_and_streams
import bisect as _bisect

_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _get_free_block(self, is_small, stream, size):
        keys = self._pool_keys[is_small]
        i = _bisect.bisect_left(keys, (stream, size, 0))
        if i == len(keys):
            return None
        block_size = keys[i][1]
        if size < self.max_split_size <= block_size:
            return None
        if size >= self.max_split_size and block_size >= size + kLargeBuffer:
            return None
        return self._free_blocks.pop(keys.pop(i)[2])
