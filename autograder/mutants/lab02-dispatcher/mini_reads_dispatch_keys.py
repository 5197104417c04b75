# Mutant: reads each tensor's keys from torch._C._dispatch_keys instead of deriving them
# replaces: MiniDispatcher
# must fail: test_MiniDispatcher


# The rest of the class is a correct answer; only the method below is wrong.
class MiniDispatcher(MiniDispatcher):
    def keyset(self, *tensors, include=(), exclude=()):
        ks = None
        for t in tensors:
            ks = torch._C._dispatch_keys(t) if ks is None else ks | torch._C._dispatch_keys(t)
        for key in include:
            if key not in KEY_NAMES:
                raise ValueError(f"unknown dispatch key {key!r}")
            k = torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, key))
            ks = k if ks is None else ks | k
        if ks is None:
            return []
        for key in exclude:
            if key not in KEY_NAMES:
                raise ValueError(f"unknown dispatch key {key!r}")
            ks = ks - torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, key))
        return [k for k in keyset_names(ks) if k in KEY_NAMES]
