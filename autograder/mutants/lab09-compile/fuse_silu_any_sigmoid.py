# Mutant: fuses every multiplication by a sigmoid, without checking that the other operand is the sigmoid's input
# replaces: fuse_silu
# must fail: test_fuse_silu, hidden_fuse_silu
import operator

import torch
import torch.nn.functional as F


def fuse_silu(gm):
    graph = gm.graph

    def is_sigmoid(node):
        return isinstance(node, torch.fx.Node) and (
            (node.op == "call_function" and node.target is torch.sigmoid)
            or (node.op == "call_method" and node.target == "sigmoid"))

    for node in list(graph.nodes):
        is_mul = (node.op == "call_function" and node.target in (operator.mul, torch.mul)) or \
            (node.op == "call_method" and node.target == "mul")
        if not is_mul or len(node.args) != 2:
            continue
        a, b = node.args
        sig = b if is_sigmoid(b) else a if is_sigmoid(a) else None
        if sig is None:
            continue
        with graph.inserting_before(node):
            silu = graph.call_function(F.silu, (sig.args[0],))
        node.replace_all_uses_with(silu)
        graph.erase_node(node)
        if not sig.users:
            graph.erase_node(sig)
    graph.lint()
    gm.recompile()
    return gm
