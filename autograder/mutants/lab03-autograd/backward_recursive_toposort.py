# Mutant: a micrograd-style recursive DFS for the topological order: right on small graphs, RecursionError on deep ones
# replaces: backward
# must fail: hidden_backward
import torch


def backward(outputs, inputs, grad_outputs):
    order, seen = [], set()

    def visit(node):
        if node is None or node in seen:
            return
        seen.add(node)
        for nxt, _ in node.next_functions:
            visit(nxt)
        order.append(node)

    for out in outputs:
        visit(out.grad_fn)
    buffers = {}

    def add(node, nr, grad):
        slots = buffers.setdefault(node, [None] * len(node._input_metadata))
        grad = grad.sum_to_size(node._input_metadata[nr].shape)
        slots[nr] = grad if slots[nr] is None else slots[nr] + grad

    with torch.no_grad():
        for out, g in zip(outputs, grad_outputs):
            add(out.grad_fn, out.output_nr, g)
        for node in reversed(order):
            if hasattr(node, "variable") or node not in buffers:
                continue
            grads = node(*buffers[node])
            if not isinstance(grads, tuple):
                grads = (grads,)
            for (nxt, nr), grad in zip(node.next_functions, grads):
                if nxt is not None and grad is not None:
                    add(nxt, nr, grad)
    found = {id(n.variable): s[0] for n, s in buffers.items() if hasattr(n, "variable")}
    return tuple(found.get(id(x), torch.zeros_like(x)) for x in inputs)
