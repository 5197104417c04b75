# Mutant: enters and exits the mode by hand, so an exception in fn leaves it on the stack
# replaces: trace_aten_ops
# must fail: test_trace_aten_ops, hidden_trace_aten_ops


def trace_aten_ops(fn, *args, **kwargs):
    class Tracer(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    tracer = Tracer()
    tracer.__enter__()
    fn(*args, **kwargs)
    tracer.__exit__(None, None, None)
    return tracer.ops
