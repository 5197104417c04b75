# Mutant: assumes every report has one more graph than breaks (graph_count = break_count + 1)
# replaces: graph_break_report
# must fail: hidden_graph_break_report
import torch
import torch._dynamo


def graph_break_report(fn, *args):
    explanation = torch._dynamo.explain(fn)(*args)
    reasons = [r.reason for r in explanation.break_reasons]
    return {"graph_count": len(reasons) + 1, "break_count": len(reasons), "break_reasons": reasons}
