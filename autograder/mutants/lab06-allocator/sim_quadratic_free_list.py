# Mutant: the free blocks are an unsorted list, scanned in full for the best fit and removed with list.remove
# replaces: CachingAllocatorSim
# must fail: hidden_performance
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _get_free_block(self, is_small, stream, size):
        best = None
        for key in self._pool_keys[is_small]:
            if key[0] == stream and key[1] >= size and (best is None or key < best):
                best = key
        if best is None:
            return None
        if size < self.max_split_size <= best[1] or (size >= self.max_split_size and best[1] >= size + kLargeBuffer):
            return None
        self._pool_keys[is_small].remove(best)
        return self._free_blocks.pop(best[2])

    def _insert_free(self, block):
        self._pool_keys[block.is_small].append((block.stream, block.size, block.address))
        self._free_blocks[block.address] = block

    def _remove_free(self, block):
        self._pool_keys[block.is_small].remove((block.stream, block.size, block.address))
        del self._free_blocks[block.address]

    def _release_cached_blocks(self):
        self._pool_keys = {k: sorted(v) for k, v in self._pool_keys.items()}
        super()._release_cached_blocks()
        return True

    def _release_available_cached_blocks(self, is_small, stream, size):
        self._pool_keys[is_small].sort()
        return super()._release_available_cached_blocks(is_small, stream, size)
