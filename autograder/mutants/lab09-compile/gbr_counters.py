# Mutant: takes the breaks from torch._dynamo.utils.counters["graph_break"], which misses data-dependent branches
# replaces: graph_break_report
# must fail: test_graph_break_report, hidden_graph_break_report
import torch
import torch._dynamo
from torch._dynamo.utils import counters


def graph_break_report(fn, *args):
    counters.clear()
    explanation = torch._dynamo.explain(fn)(*args)
    reasons = [reason for reason, n in counters["graph_break"].items() for _ in range(n)]
    return {"graph_count": len(explanation.graphs), "break_count": len(reasons), "break_reasons": reasons}
