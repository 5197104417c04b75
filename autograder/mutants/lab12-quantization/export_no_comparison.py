# Mutant: runs the exported program at two sizes but never compares it with eager
# replaces: export_and_check
# must fail: hidden_export_and_check


def export_and_check(model, example, dynamic_dim):
    dim = dynamic_dim % example.dim()
    ep = torch.export.export(model, (example,), dynamic_shapes=({dim: Dim("batch")},))
    n = example.shape[dim]
    for size in (n + 1, 2 * n):
        shape = list(example.shape)
        shape[dim] = size
        x = torch.randn(shape)
        with torch.no_grad():
            model(x)
            ep.module()(x)
    return ep
