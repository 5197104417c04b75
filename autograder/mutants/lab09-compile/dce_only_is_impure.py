# Mutant: decides side effects with node.is_impure() alone, so unused in-place methods (x.add_(1)) are erased
# replaces: dead_code_eliminate
# must fail: test_dead_code_eliminate, hidden_dead_code_eliminate


def dead_code_eliminate(gm):
    erased = 0
    for node in reversed(list(gm.graph.nodes)):
        if not node.users and not node.is_impure():
            gm.graph.erase_node(node)
            erased += 1
    gm.graph.lint()
    gm.recompile()
    return erased
