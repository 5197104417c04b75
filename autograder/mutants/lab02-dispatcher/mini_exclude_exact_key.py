# Mutant: exclude removes only the key named, not its functionality on every backend
# replaces: MiniDispatcher
# must fail: hidden_MiniDispatcher


# The rest of the class is a correct answer; only the method below is wrong.
class MiniDispatcher(MiniDispatcher):
    def keyset(self, *tensors, include=(), exclude=()):
        order = ["PythonTLSSnapshot", "AutocastCUDA", "AutocastCPU", "Autograd", "ADInplaceOrView",
                 "Negative", "Conjugate", "Python", "BackendSelect", "Dense"]
        backend_order = ["Meta", "CUDA", "CPU"]

        def split(key):
            if key not in KEY_NAMES:
                raise ValueError(f"unknown dispatch key {key!r}")
            if key in backend_order:
                return "Dense", key
            if key.startswith("Autograd"):
                return "Autograd", key[len("Autograd"):]
            return key, None

        funcs, backends = set(), set()
        for t in tensors:
            backend = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}[t.device.type]
            backends.add(backend)
            funcs.add("Dense")
            if not t.is_inference():
                funcs |= {"Autograd", "ADInplaceOrView"}
            if backend != "Meta":
                funcs.add("Autocast" + backend)
            if t.is_conj():
                funcs.add("Conjugate")
            if t.is_neg():
                funcs.add("Negative")
        for key in include:
            f, b = split(key)
            funcs.add(f)
            if b:
                backends.add(b)
        excluded = set(exclude)
        for key in excluded:
            split(key)
        keys = []
        for f in order:
            if f not in funcs:
                continue
            if f == "Dense":
                keys += [b for b in backend_order if b in backends]
            elif f == "Autograd":
                keys += ["Autograd" + b for b in backend_order if b in backends]
            else:
                keys.append(f)
        return [k for k in keys if k not in excluded]
