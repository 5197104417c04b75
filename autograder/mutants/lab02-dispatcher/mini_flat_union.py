# Mutant: joins the tensors' key lists key by key (no functionality x backend bits)
# replaces: MiniDispatcher
# must fail: hidden_MiniDispatcher


# The rest of the class is a correct answer; only the method below is wrong.
class MiniDispatcher(MiniDispatcher):
    def keyset(self, *tensors, include=(), exclude=()):
        priority = ["PythonTLSSnapshot", "AutocastCUDA", "AutocastCPU", "AutogradMeta", "AutogradCUDA", "AutogradCPU",
                    "ADInplaceOrView", "Negative", "Conjugate", "Python", "BackendSelect", "Meta", "CUDA", "CPU"]
        for key in (*include, *exclude):
            if key not in KEY_NAMES:
                raise ValueError(f"unknown dispatch key {key!r}")
        keys = set(include)
        for t in tensors:
            backend = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}[t.device.type]
            keys.add(backend)
            if not t.is_inference():
                keys |= {"Autograd" + backend, "ADInplaceOrView"}
            if backend != "Meta":
                keys.add("Autocast" + backend)
            if t.is_conj():
                keys.add("Conjugate")
            if t.is_neg():
                keys.add("Negative")
        excluded = set(exclude)
        if excluded & {"AutogradCPU", "AutogradCUDA", "AutogradMeta"}:  # exclude works per functionality
            excluded |= {"AutogradCPU", "AutogradCUDA", "AutogradMeta"}
        if excluded & {"CPU", "CUDA", "Meta"}:
            excluded |= {"CPU", "CUDA", "Meta"}
        return [k for k in priority if k in keys and k not in excluded]
