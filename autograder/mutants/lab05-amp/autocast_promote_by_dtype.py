# Mutant: detects "promote" by comparing result dtypes inside and outside autocast, not the casts in the op trace
# replaces: autocast_policy
# must fail: test_autocast_policy, hidden_autocast_policy
import torch
from torch.utils._pytree import tree_leaves, tree_map


def autocast_policy(op, *args):
    n_float = sum(isinstance(a, torch.Tensor) and a.is_floating_point() for a in tree_leaves(args))

    def run(dtypes, autocast):
        it = iter(dtypes)
        cast = lambda a: a.detach().to(next(it)) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
        try:
            with torch.autocast("cpu", enabled=autocast):
                out = op(*tree_map(cast, args))
        except (RuntimeError, TypeError, NotImplementedError):
            return "fails"
        return next((t.dtype for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.is_floating_point()), None)

    f32, bf16 = torch.float32, torch.bfloat16
    if run([f32] * n_float, True) == bf16 and run([f32] * n_float, False) != bf16:
        return "lower"
    if run([bf16] * n_float, True) == f32 and run([bf16] * n_float, False) != f32:
        return "fp32"
    if n_float >= 2:
        mixed = [bf16] + [f32] * (n_float - 1)
        inside, outside = run(mixed, True), run(mixed, False)
        if inside != "fails" and inside != outside:
            return "promote"
    return "unchanged"
