# Mutant: remembers visited names instead of visited nodes, so two different leaves collapse into one
# replaces: graph_nodes
# must fail: test_graph_nodes, hidden_graph_nodes


def graph_nodes(t):
    if t.grad_fn is None:
        return []
    queue, names = [t.grad_fn], []
    for node in queue:
        if node.name() in names:
            continue
        names.append(node.name())
        queue.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return names
