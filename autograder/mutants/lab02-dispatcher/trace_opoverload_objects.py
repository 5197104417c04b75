# Mutant: returns the OpOverload objects themselves, not their names
# replaces: trace_aten_ops
# must fail: test_trace_aten_ops, hidden_trace_aten_ops


def trace_aten_ops(fn, *args, **kwargs):
    class Tracer(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func)
            return func(*args, **(kwargs or {}))

    with Tracer() as tracer:
        fn(*args, **kwargs)
    return tracer.ops
