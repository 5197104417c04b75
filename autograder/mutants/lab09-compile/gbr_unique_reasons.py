# Mutant: collects the reasons in a set, so two breaks for the same reason count once
# replaces: graph_break_report
# must fail: test_graph_break_report, hidden_graph_break_report
import torch
import torch._dynamo


def graph_break_report(fn, *args):
    explanation = torch._dynamo.explain(fn)(*args)
    reasons = sorted({r.reason for r in explanation.break_reasons})
    return {"graph_count": len(explanation.graphs), "break_count": len(reasons), "break_reasons": reasons}
