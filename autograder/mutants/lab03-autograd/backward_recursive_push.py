# Mutant: no topological sort: pushes every incoming gradient straight through the node (right values, but a
# node runs once per path to it)
# replaces: backward
# must fail: test_backward, hidden_backward
import torch


def backward(outputs, inputs, grad_outputs):
    found = {}

    def push(node, nr, grad):
        grad = grad.sum_to_size(node._input_metadata[nr].shape)
        if hasattr(node, "variable"):
            key = id(node.variable)
            found[key] = grad if key not in found else found[key] + grad
            return
        args = [None] * len(node._input_metadata)
        args[nr] = grad
        grads = node(*args)
        if not isinstance(grads, tuple):
            grads = (grads,)
        for (nxt, k), g in zip(node.next_functions, grads):
            if nxt is not None and g is not None:
                push(nxt, k, g)

    with torch.no_grad():
        for out, g in zip(outputs, grad_outputs):
            push(out.grad_fn, out.output_nr, g)
    return tuple(found.get(id(x), torch.zeros_like(x)) for x in inputs)
