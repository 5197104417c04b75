# Mutant: classifies by the result's dtype alone, so it never sees the casts behind "promote"
# replaces: autocast_policy
# must fail: test_autocast_policy, hidden_autocast_policy
import torch
from torch.utils._pytree import tree_leaves, tree_map


def autocast_policy(op, *args):
    def run(dtype, autocast):
        cast = lambda a: a.detach().to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
        try:
            with torch.autocast("cpu", enabled=autocast):
                out = op(*tree_map(cast, args))
        except (RuntimeError, TypeError, NotImplementedError):
            return None
        return next((t.dtype for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.is_floating_point()), None)

    if run(torch.float32, True) == torch.bfloat16 and run(torch.float32, False) != torch.bfloat16:
        return "lower"
    if run(torch.bfloat16, True) == torch.float32 and run(torch.bfloat16, False) != torch.float32:
        return "fp32"
    return "unchanged"
