# Mutant: forgets the visited set, so a node reached through two edges is listed twice
# replaces: graph_nodes
# must fail: test_graph_nodes, hidden_graph_nodes


def graph_nodes(t):
    if t.grad_fn is None:
        return []
    queue = [t.grad_fn]
    for node in queue:
        queue.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return [node.name() for node in queue]
