# Mutant: matches only x * sigmoid(x), with the sigmoid as the second operand, not sigmoid(x) * x
# replaces: fuse_silu
# must fail: test_fuse_silu, hidden_fuse_silu
import operator

import torch
import torch.nn.functional as F


def fuse_silu(gm):
    graph = gm.graph
    for node in list(graph.nodes):
        is_mul = (node.op == "call_function" and node.target in (operator.mul, torch.mul)) or \
            (node.op == "call_method" and node.target == "mul")
        if not is_mul or len(node.args) != 2 or node.kwargs:
            continue
        x, sig = node.args
        if not isinstance(sig, torch.fx.Node) or sig.args != (x,) or not (
                (sig.op == "call_function" and sig.target is torch.sigmoid)
                or (sig.op == "call_method" and sig.target == "sigmoid")):
            continue
        with graph.inserting_before(node):
            silu = graph.call_function(F.silu, (x,))
        node.replace_all_uses_with(silu)
        graph.erase_node(node)
        if not sig.users:
            graph.erase_node(sig)
    graph.lint()
    gm.recompile()
    return gm
