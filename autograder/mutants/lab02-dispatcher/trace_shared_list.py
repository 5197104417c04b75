# Mutant: records into one module-level list, cleared at each call (nested traces share it)
# replaces: trace_aten_ops
# must fail: hidden_trace_aten_ops
_OPS = []


class _Tracer(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        _OPS.append(str(func))
        return func(*args, **(kwargs or {}))


def trace_aten_ops(fn, *args, **kwargs):
    _OPS.clear()
    with _Tracer():
        fn(*args, **kwargs)
    return _OPS
