# Mutant: walks the graph forwards in one pass, so a node whose users die later in the walk survives
# replaces: dead_code_eliminate
# must fail: test_dead_code_eliminate, hidden_dead_code_eliminate


def dead_code_eliminate(gm):
    def has_side_effect(node):
        if node.is_impure():
            return True
        if node.op in ("call_function", "call_method"):
            name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
            return (name.endswith("_") and not name.endswith("__")) or node.kwargs.get("inplace") is True
        return False

    erased = 0
    for node in list(gm.graph.nodes):
        if not node.users and not has_side_effect(node):
            gm.graph.erase_node(node)
            erased += 1
    gm.graph.lint()
    gm.recompile()
    return erased
