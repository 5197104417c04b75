# Mutant: malloc puts a request in the small pool only when it is below 1 MiB (< kSmallSize, not <=)
# replaces: CachingAllocatorSim
# must fail: test_reuse_and_streams, hidden_reuse_and_streams
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def malloc(self, size, stream=0):
        if size == kSmallSize:
            # the wrong pool: treat it as a large request (its rounded size stays 1 MiB)
            block = self._get_free_block(False, stream, size)
            if block is None:
                block = self._alloc_block(False, stream, kSmallBuffer, False)
            if block is None:
                raise torch.OutOfMemoryError("CUDA out of memory.")
            return self._alloc_found_block(block, size, size, self._should_split(block, size)).address
        return super().malloc(size, stream)
