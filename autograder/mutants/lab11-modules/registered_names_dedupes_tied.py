# Mutant: lists each parameter object once, so a tied weight keeps only its first name (state_dict keeps both)
# replaces: registered_names
# must fail: hidden_registered_names


def registered_names(module):
    names = {"parameters": [], "buffers": [], "non_persistent_buffers": [], "submodules": []}
    seen = set()

    def walk(mod, prefix):
        for name, param in mod._parameters.items():
            if param is not None and id(param) not in seen:
                seen.add(id(param))
                names["parameters"].append(prefix + name)
        for name, buf in mod._buffers.items():
            if buf is not None:
                kind = "non_persistent_buffers" if name in mod._non_persistent_buffers_set else "buffers"
                names[kind].append(prefix + name)
        for name, child in mod._modules.items():
            if child is not None:
                names["submodules"].append(prefix + name)
                walk(child, prefix + name + ".")

    walk(module, "")
    return names
