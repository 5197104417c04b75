# Mutant: lists every key of the dicts, including entries registered as None (Linear(bias=False).bias)
# replaces: registered_names
# must fail: test_registered_names, hidden_registered_names


def registered_names(module):
    names = {"parameters": [], "buffers": [], "non_persistent_buffers": [], "submodules": []}

    def walk(mod, prefix):
        names["parameters"] += [prefix + n for n in mod._parameters]
        for name in mod._buffers:
            kind = "non_persistent_buffers" if name in mod._non_persistent_buffers_set else "buffers"
            names[kind].append(prefix + name)
        for name, child in mod._modules.items():
            names["submodules"].append(prefix + name)
            if child is not None:
                walk(child, prefix + name + ".")

    walk(module, "")
    return names
