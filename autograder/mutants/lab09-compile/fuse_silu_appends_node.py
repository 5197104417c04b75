# Mutant: creates the F.silu node without graph.inserting_before(...), so it lands after the output node
# replaces: fuse_silu
# must fail: test_fuse_silu, hidden_fuse_silu
import operator

import torch
import torch.nn.functional as F


def fuse_silu(gm):
    graph = gm.graph

    def sigmoid_input(node):
        if not isinstance(node, torch.fx.Node) or len(node.args) != 1:
            return None
        if (node.op == "call_function" and node.target is torch.sigmoid) or \
                (node.op == "call_method" and node.target == "sigmoid"):
            return node.args[0]
        return None

    for node in list(graph.nodes):
        is_mul = (node.op == "call_function" and node.target in (operator.mul, torch.mul)) or \
            (node.op == "call_method" and node.target == "mul")
        if not is_mul or len(node.args) != 2:
            continue
        a, b = node.args
        if sigmoid_input(b) is a:
            x, sig = a, b
        elif sigmoid_input(a) is b:
            x, sig = b, a
        else:
            continue
        silu = graph.call_function(F.silu, (x,))
        node.replace_all_uses_with(silu)
        graph.erase_node(node)
        if not sig.users:
            graph.erase_node(sig)
    gm.recompile()
    return gm
