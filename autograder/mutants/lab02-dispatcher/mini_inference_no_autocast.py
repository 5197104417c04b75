# Mutant: an inference tensor gets no Autocast key either (it has no autograd keys, so no "extras")
# replaces: MiniDispatcher
# must fail: test_MiniDispatcher, hidden_MiniDispatcher


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
            if backend != "Meta" and not t.is_inference():
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
        for key in exclude:
            funcs.discard(split(key)[0])
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
        return keys
