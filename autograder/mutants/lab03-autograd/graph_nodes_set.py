# Mutant: collects the names in a set, losing the order (and the repeated names of distinct nodes)
# replaces: graph_nodes
# must fail: test_graph_nodes, hidden_graph_nodes


def graph_nodes(t):
    names = set()
    todo = [t.grad_fn] if t.grad_fn is not None else []
    while todo:
        node = todo.pop(0)
        names.add(node.name())
        todo.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return names
