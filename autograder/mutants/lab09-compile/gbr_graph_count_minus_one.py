# Mutant: reports explain's graph_break_count, which torch 2.13 computes as graph_count - 1
# replaces: graph_break_report
# must fail: hidden_graph_break_report
import torch
import torch._dynamo


def graph_break_report(fn, *args):
    explanation = torch._dynamo.explain(fn)(*args)
    return {"graph_count": explanation.graph_count, "break_count": explanation.graph_break_count,
            "break_reasons": [r.reason for r in explanation.break_reasons]}
