# Mutant: probes "lower" with the arguments as given instead of casting them to float32 first
# replaces: autocast_policy
# must fail: hidden_autocast_policy
import torch
from torch.utils._pytree import tree_leaves, tree_map

from labkit.testing import record_aten_ops


def autocast_policy(op, *args):
    n_float = sum(isinstance(a, torch.Tensor) and a.is_floating_point() for a in tree_leaves(args))

    def run(dtypes, autocast):
        it = iter(dtypes)

        def cast(a):
            if not (isinstance(a, torch.Tensor) and a.is_floating_point()):
                return a
            dtype = next(it)
            return a.detach() if dtype is None else a.detach().to(dtype)

        try:
            with torch.autocast("cpu", enabled=autocast):
                out, ops = record_aten_ops(op, *tree_map(cast, args))
        except (RuntimeError, TypeError, NotImplementedError):
            return "fails", []
        dtype = next((t.dtype for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.is_floating_point()), None)
        return dtype, ops

    if run([None] * n_float, True)[0] == torch.bfloat16 and run([None] * n_float, False)[0] != torch.bfloat16:
        return "lower"  # float64 or float16 arguments are never probed in float32
    if run([torch.bfloat16] * n_float, True)[0] == torch.float32 and \
            run([torch.bfloat16] * n_float, False)[0] != torch.float32:
        return "fp32"
    if n_float >= 2:
        mixed = [torch.bfloat16] + [torch.float32] * (n_float - 1)
        (inside, ops_in), (outside, ops_out) = run(mixed, True), run(mixed, False)
        if inside != "fails" and (outside == "fails" or ops_in != ops_out):
            return "promote"
    return "unchanged"
