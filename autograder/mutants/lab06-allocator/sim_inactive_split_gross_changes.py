# Mutant: free updates inactive_split per merged neighbour and per merged block, not as one net change
# replaces: CachingAllocatorSim
# must fail: hidden_replay
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _free_block(self, block):
        small = block.is_small
        original_size, requested_size = block.size, block.requested_size
        for neighbour in (block.prev, block.next):
            merged = self._try_merge_blocks(block, neighbour)
            if merged:
                self._decrease("inactive_split", small, 1)
                self._decrease("inactive_split_bytes", small, merged)
        self._insert_free(block)
        if block.is_split():
            self._increase("inactive_split", small, 1)
            self._increase("inactive_split_bytes", small, block.size)
        self._decrease("active", small, 1)
        self._decrease("active_bytes", small, original_size)
        self._decrease("requested_bytes", small, requested_size)
        block.requested_size = 0
