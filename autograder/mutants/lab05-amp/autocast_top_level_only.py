# Mutant: casts only top-level tensor arguments, so the tensors inside torch.cat's list are never probed
# replaces: autocast_policy
# must fail: test_autocast_policy, hidden_autocast_policy
import torch
from torch.utils._pytree import tree_leaves

from labkit.testing import record_aten_ops


def autocast_policy(op, *args):
    n_float = sum(isinstance(a, torch.Tensor) and a.is_floating_point() for a in args)

    def run(dtypes, autocast):
        it = iter(dtypes)
        probe = [a.detach().to(next(it)) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                 for a in args]
        try:
            with torch.autocast("cpu", enabled=autocast):
                out, ops = record_aten_ops(op, *probe)
        except (RuntimeError, TypeError, NotImplementedError):
            return "fails", []
        dtype = next((t.dtype for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.is_floating_point()), None)
        return dtype, ops

    if run([torch.float32] * n_float, True)[0] == torch.bfloat16 and \
            run([torch.float32] * n_float, False)[0] != torch.bfloat16:
        return "lower"
    if run([torch.bfloat16] * n_float, True)[0] == torch.float32 and \
            run([torch.bfloat16] * n_float, False)[0] != torch.float32:
        return "fp32"
    if n_float >= 2:
        mixed = [torch.bfloat16] + [torch.float32] * (n_float - 1)
        (inside, ops_in), (outside, ops_out) = run(mixed, True), run(mixed, False)
        if inside != "fails" and (outside == "fails" or ops_in != ops_out):
            return "promote"
    return "unchanged"
