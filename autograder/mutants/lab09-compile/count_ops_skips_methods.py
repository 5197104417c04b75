# Mutant: counts call_function and call_module nodes but forgets call_method (x.relu(), x.sum())
# replaces: count_ops
# must fail: test_count_ops, hidden_count_ops
from collections import Counter


def count_ops(gm):
    counts = Counter()
    for node in gm.graph.nodes:
        if node.op == "call_function":
            counts[node.target.__name__] += 1
        elif node.op == "call_module":
            counts[type(gm.get_submodule(node.target)).__name__] += 1
    return counts
