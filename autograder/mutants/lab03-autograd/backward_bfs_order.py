# Mutant: runs the nodes in breadth-first order from the outputs, each once, without waiting for all gradients
# replaces: backward
# must fail: test_backward, hidden_backward
import torch


def backward(outputs, inputs, grad_outputs):
    buffers = {}

    def add(node, nr, grad):
        slots = buffers.setdefault(node, [None] * len(node._input_metadata))
        grad = grad.sum_to_size(node._input_metadata[nr].shape)
        slots[nr] = grad if slots[nr] is None else slots[nr] + grad

    with torch.no_grad():
        for out, g in zip(outputs, grad_outputs):
            add(out.grad_fn, out.output_nr, g)
        queue, seen = [o.grad_fn for o in outputs], {o.grad_fn for o in outputs}
        for node in queue:
            if hasattr(node, "variable"):
                continue
            grads = node(*buffers.get(node, [None] * len(node._input_metadata)))
            if not isinstance(grads, tuple):
                grads = (grads,)
            for (nxt, nr), grad in zip(node.next_functions, grads):
                if nxt is not None and grad is not None:
                    add(nxt, nr, grad)
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
    found = {id(n.variable): s[0] for n, s in buffers.items() if hasattr(n, "variable")}
    return tuple(found.get(id(x), torch.zeros_like(x)) for x in inputs)
