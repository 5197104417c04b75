# Mutant: appends (op, key) to the trace after the kernel returns, so nested kernels come out first
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
                        continue
                    raise NotImplementedError(f"Could not run {op!r} with dispatch key {key!r}")
                below = keys[i + 1:]
                result = kernel(lambda *ts: dispatch(below, ts), *tensors)
                self.trace.append((op, key))
                return result
            raise NotImplementedError(f"Could not run {op!r}: no kernel left among the keys {keys}")

        return dispatch(route, tensors)
