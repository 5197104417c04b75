# Mutant: free forgets to decrease allocation and allocated_bytes (active, requested and the rest are right)
# replaces: CachingAllocatorSim
# must fail: test_memory_stats, hidden_memory_stats
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def free(self, addr):
        if addr == 0:
            return
        block = self._allocated.pop(addr, None)
        if block is None:
            raise RuntimeError(f"invalid device pointer: {addr:#x}")
        block.allocated = False
        self._free_block(block)
