# Mutant: calls the built-in Graph.eliminate_dead_code, which trusts is_impure() and drops x.add_(1)
# replaces: dead_code_eliminate
# must fail: test_dead_code_eliminate, hidden_dead_code_eliminate


def dead_code_eliminate(gm):
    before = len(gm.graph.nodes)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return before - len(gm.graph.nodes)
