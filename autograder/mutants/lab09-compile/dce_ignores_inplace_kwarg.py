# Mutant: keeps x.add_(1) and torch.relu_(x) but forgets the inplace=True keyword (F.relu(x, inplace=True))
# replaces: dead_code_eliminate
# must fail: hidden_dead_code_eliminate


def dead_code_eliminate(gm):
    def has_side_effect(node):
        if node.is_impure():
            return True
        if node.op in ("call_function", "call_method"):
            name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
            return name.endswith("_") and not name.endswith("__")
        return False

    erased = 0
    for node in reversed(list(gm.graph.nodes)):
        if not node.users and not has_side_effect(node):
            gm.graph.erase_node(node)
            erased += 1
    gm.graph.lint()
    gm.recompile()
    return erased
