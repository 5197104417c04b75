# Mutant: asks the built-in walkers (named_parameters, named_buffers, state_dict) instead of reading the dicts
# replaces: registered_names
# must fail: test_registered_names, hidden_registered_names


def registered_names(module):
    state = module.state_dict()
    buffers = [n for n, _ in module.named_buffers(remove_duplicate=False)]
    return {"parameters": [n for n, _ in module.named_parameters(remove_duplicate=False)],
            "buffers": [n for n in buffers if n in state],
            "non_persistent_buffers": [n for n in buffers if n not in state],
            "submodules": [n for n, _ in module.named_modules(remove_duplicate=False) if n]}
