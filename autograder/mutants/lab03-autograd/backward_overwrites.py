# Mutant: stores each incoming gradient in the slot instead of adding it to what is there
# replaces: backward
# must fail: test_backward, hidden_backward
import torch


def backward(outputs, inputs, grad_outputs):
    # 1. Every node reachable from the outputs, and how many edges point at it.
    dependencies = {}
    stack = []
    for out in outputs:
        if out.grad_fn not in dependencies:  # an output may appear twice
            dependencies[out.grad_fn] = 0
            stack.append(out.grad_fn)
    seen = set(stack)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            dependencies[nxt] = dependencies.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)

    # 2. One gradient slot per input of each node; the seeds go into the outputs' nodes.
    buffers = {}

    def accumulate(node, nr, grad):
        slots = buffers.setdefault(node, [None] * len(node._input_metadata))
        grad = grad.sum_to_size(node._input_metadata[nr].shape)  # the engine reduces broadcasts
        slots[nr] = grad

    with torch.no_grad():
        for out, g in zip(outputs, grad_outputs):
            accumulate(out.grad_fn, out.output_nr, g)

        # 3. Kahn's algorithm: a node runs once every node that feeds it a gradient has run.
        ready = [node for node, count in dependencies.items() if count == 0]
        while ready:
            node = ready.pop()
            if hasattr(node, "variable"):
                continue  # AccumulateGrad: its buffer is the leaf's gradient; never call it
            grads = node(*buffers.get(node, [None] * len(node._input_metadata)))
            if not isinstance(grads, tuple):
                grads = (grads,)
            for (nxt, nr), grad in zip(node.next_functions, grads):
                if nxt is None:
                    continue
                if grad is not None:
                    accumulate(nxt, nr, grad)
                dependencies[nxt] -= 1
                if dependencies[nxt] == 0:
                    ready.append(nxt)

    # 4. Read each input's gradient out of its AccumulateGrad node's buffer.
    leaf_grads = {id(node.variable): slots[0] for node, slots in buffers.items() if hasattr(node, "variable")}
    result = []
    for x in inputs:
        g = leaf_grads.get(id(x))
        result.append(torch.zeros_like(x) if g is None else g)
    return tuple(result)
