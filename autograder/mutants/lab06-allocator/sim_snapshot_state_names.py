# Mutant: snapshot names the block states "allocated" and "free" instead of PyTorch's names
# replaces: CachingAllocatorSim
# must fail: test_snapshot
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def snapshot(self):
        segments = super().snapshot()
        for seg in segments:
            for b in seg["blocks"]:
                b["state"] = "allocated" if b["state"] == "active_allocated" else "free"
        return segments
