# Mutant: reuses one module-level backend and never resets Dynamo, so a second report on a function finds it cached
# replaces: graph_break_report
# must fail: hidden_graph_break_report
import torch

_GRAPHS = []


def _keep(gm, example_inputs):
    _GRAPHS.append(gm)
    return gm.forward


def graph_break_report(fn, *args):
    _GRAPHS.clear()
    torch.compile(fn, backend=_keep)(*args)
    reasons = [g.compile_subgraph_reason.reason for g in _GRAPHS if g.compile_subgraph_reason.graph_break]
    return {"graph_count": len(_GRAPHS), "break_count": len(reasons), "break_reasons": reasons}
