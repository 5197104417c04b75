# Mutant: looks submodules up with getattr(gm, target), which fails for a nested module's dotted path
# replaces: count_ops
# must fail: hidden_count_ops
from collections import Counter


def count_ops(gm):
    counts = Counter()
    for node in gm.graph.nodes:
        if node.op == "call_function":
            counts[node.target.__name__] += 1
        elif node.op == "call_method":
            counts[node.target] += 1
        elif node.op == "call_module":
            counts[type(getattr(gm, node.target)).__name__] += 1
    return counts
