# Mutant: treats every buffer as persistent, ignoring _non_persistent_buffers_set
# replaces: registered_names
# must fail: test_registered_names, hidden_registered_names


def registered_names(module):
    names = {"parameters": [], "buffers": [], "non_persistent_buffers": [], "submodules": []}

    def walk(mod, prefix):
        for name, param in mod._parameters.items():
            if param is not None:
                names["parameters"].append(prefix + name)
        for name, buf in mod._buffers.items():
            if buf is not None:
                names["buffers"].append(prefix + name)
        for name, child in mod._modules.items():
            if child is not None:
                names["submodules"].append(prefix + name)
                walk(child, prefix + name + ".")

    walk(module, "")
    return names
