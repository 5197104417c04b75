# Mutant: records every key it walks past in the trace, fallthrough keys too
# replaces: MiniDispatcher
# must fail: test_MiniDispatcher, hidden_MiniDispatcher


# The rest of the class is a correct answer; only the method below is wrong.
class MiniDispatcher(MiniDispatcher):
    def call(self, op, *tensors, include=(), exclude=()):
        keys = self.keyset(*tensors, include=include, exclude=exclude)

        def backend(key):
            for b in ("Meta", "CUDA", "CPU"):
                if key in (b, "Autograd" + b):
                    return b
            return None

        backends = [backend(k) for k in keys if backend(k)]
        route = [k for k in keys if backend(k) in (None, backends[0] if backends else None)]

        def dispatch(keys, tensors):
            for i, key in enumerate(keys):
                kernel = self.kernels.get((op, key))
                if kernel is None:
                    if key in self.fallthroughs:
                        self.trace.append((op, key))
                        continue
                    raise NotImplementedError(f"Could not run {op!r} with dispatch key {key!r}")
                self.trace.append((op, key))
                below = keys[i + 1:]
                return kernel(lambda *ts: dispatch(below, ts), *tensors)
            raise NotImplementedError(f"Could not run {op!r}: no kernel left among the keys {keys}")

        return dispatch(route, tensors)
