# Mutant: a freed block keeps the requested_size of its last allocation, and snapshot reports it
# replaces: CachingAllocatorSim
# must fail: hidden_snapshot
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def _free_block(self, block):
        requested = block.requested_size
        super()._free_block(block)
        block.requested_size = requested

    def _alloc_found_block(self, block, size, requested_size, split):
        return super()._alloc_found_block(block, size, requested_size, split)

    def snapshot(self):
        segments = super().snapshot()
        by_address = {**self._free_blocks}
        for seg in segments:
            for b in seg["blocks"]:
                if b["state"] == "inactive" and b["address"] in by_address:
                    b["requested_size"] = by_address[b["address"]].requested_size
        return segments
