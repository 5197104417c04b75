# Mutant: lists each overload once (a set of ops, kept in first-seen order), not every call
# replaces: trace_aten_ops
# must fail: hidden_trace_aten_ops


def trace_aten_ops(fn, *args, **kwargs):
    class Tracer(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if str(func) not in self.ops:
                self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Tracer() as tracer:
        fn(*args, **kwargs)
    return tracer.ops
