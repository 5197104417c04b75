# Mutant: never compares with the same call outside autocast, so ops that cast by themselves look like policies
# replaces: autocast_policy
# must fail: hidden_autocast_policy
import torch
from torch.utils._pytree import tree_leaves, tree_map

from labkit.testing import record_aten_ops


def autocast_policy(op, *args):
    n_float = sum(isinstance(a, torch.Tensor) and a.is_floating_point() for a in tree_leaves(args))

    def run(dtypes):
        it = iter(dtypes)
        cast = lambda a: a.detach().to(next(it)) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
        try:
            with torch.autocast("cpu"):
                out, ops = record_aten_ops(op, *tree_map(cast, args))
        except (RuntimeError, TypeError, NotImplementedError):
            return None, []
        dtype = next((t.dtype for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.is_floating_point()), None)
        return dtype, ops

    if run([torch.float32] * n_float)[0] == torch.bfloat16:
        return "lower"
    if run([torch.bfloat16] * n_float)[0] == torch.float32:
        return "fp32"
    if n_float >= 2 and "aten._to_copy.default" in run([torch.bfloat16] + [torch.float32] * (n_float - 1))[1]:
        return "promote"
    return "unchanged"
