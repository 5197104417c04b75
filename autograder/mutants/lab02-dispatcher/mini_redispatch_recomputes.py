# Mutant: redispatch recomputes the key set from the tensors it is given (then goes below the current key)
# replaces: MiniDispatcher
# must fail: hidden_MiniDispatcher


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
            for key in keys:
                kernel = self.kernels.get((op, key))
                if kernel is None:
                    if key in self.fallthroughs:
                        continue
                    raise NotImplementedError(f"Could not run {op!r} with dispatch key {key!r}")
                self.trace.append((op, key))
                def redispatch(*ts, key=key):
                    fresh = self.keyset(*ts, include=include, exclude=exclude)
                    fresh = [k for k in fresh if backend(k) in (None, next(filter(None, map(backend, fresh)), None))]
                    return dispatch(fresh[fresh.index(key) + 1:] if key in fresh else fresh, ts)
                return kernel(redispatch, *tensors)
            raise NotImplementedError(f"Could not run {op!r}: no kernel left among the keys {keys}")

        return dispatch(route, tensors)
