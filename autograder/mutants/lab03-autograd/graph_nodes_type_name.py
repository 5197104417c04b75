# Mutant: uses the Python class name (type(node).__name__) instead of node.name()
# replaces: graph_nodes
# must fail: test_graph_nodes, hidden_graph_nodes


def graph_nodes(t):
    if t.grad_fn is None:
        return []
    seen, queue = {t.grad_fn}, [t.grad_fn]
    for node in queue:
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return [type(node).__name__ for node in queue]
