# Mutant: walks the graph depth-first (pops from the end of a list) instead of breadth-first
# replaces: graph_nodes
# must fail: test_graph_nodes, hidden_graph_nodes


def graph_nodes(t):
    if t.grad_fn is None:
        return []
    names, seen, stack = [], {t.grad_fn}, [t.grad_fn]
    while stack:
        node = stack.pop()
        names.append(node.name())
        for nxt, _ in reversed(node.next_functions):
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return names
