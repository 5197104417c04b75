# Mutant: walks every key of the set, Dense and Autograd keys of the lower backends too
# replaces: MiniDispatcher
# must fail: hidden_MiniDispatcher


# The rest of the class is a correct answer; only the method below is wrong.
class MiniDispatcher(MiniDispatcher):
    def call(self, op, *tensors, include=(), exclude=()):
        keys = self.keyset(*tensors, include=include, exclude=exclude)

        def dispatch(keys, tensors):
            for i, key in enumerate(keys):
                kernel = self.kernels.get((op, key))
                if kernel is None:
                    if key in self.fallthroughs:
                        continue
                    raise NotImplementedError(f"Could not run {op!r} with dispatch key {key!r}")
                self.trace.append((op, key))
                below = keys[i + 1:]
                return kernel(lambda *ts: dispatch(below, ts), *tensors)
            raise NotImplementedError(f"Could not run {op!r}: no kernel left among the keys {keys}")

        return dispatch(keys, tensors)
