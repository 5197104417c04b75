# Mutant: releasing cached memory gives back every free block, also the free blocks of split segments
# replaces: CachingAllocatorSim
# must fail: test_oom_and_empty_cache
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _release_cached_blocks(self):
        for is_small in (False, True):
            for _, _, address in list(self._pool_keys[is_small]):
                block = self._free_blocks[address]
                if block.prev is not None:
                    block.prev.next = block.next
                if block.next is not None:
                    block.next.prev = block.prev
                self._release_block(block)
        return True
