# Mutant: reuses labkit's recorder instead of writing its own TorchDispatchMode
# replaces: trace_aten_ops
# must fail: test_trace_aten_ops
from labkit.testing import record_aten_ops


def trace_aten_ops(fn, *args, **kwargs):
    return record_aten_ops(fn, *args, **kwargs)[1]
