# Mutant: the out-of-memory message reports the requested size, not the size of the segment it failed to create
# replaces: CachingAllocatorSim
# must fail: test_oom_and_empty_cache
_Right = CachingAllocatorSim


class CachingAllocatorSim(_Right):
    def malloc(self, size, stream=0):
        try:
            return super().malloc(size, stream)
        except torch.OutOfMemoryError as exc:
            text = str(exc)
            start = text.index("Tried to allocate ") + len("Tried to allocate ")
            end = text.index(".", text.index(" ", start) + 1)
            raise torch.OutOfMemoryError(text[:start] + format_size(size) + text[end:]) from None
