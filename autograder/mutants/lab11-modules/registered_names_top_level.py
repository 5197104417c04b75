# Mutant: reads only the module's own dicts, without recursing into submodules
# replaces: registered_names
# must fail: test_registered_names, hidden_registered_names


def registered_names(module):
    return {"parameters": [n for n, p in module._parameters.items() if p is not None],
            "buffers": [n for n, b in module._buffers.items()
                        if b is not None and n not in module._non_persistent_buffers_set],
            "non_persistent_buffers": [n for n, b in module._buffers.items()
                                       if b is not None and n in module._non_persistent_buffers_set],
            "submodules": [n for n, m in module._modules.items() if m is not None]}
