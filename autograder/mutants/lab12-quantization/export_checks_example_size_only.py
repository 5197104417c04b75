# Mutant: compares program and eager only at the example's own size
# replaces: export_and_check
# must fail: test_export_and_check


def export_and_check(model, example, dynamic_dim):
    dim = dynamic_dim % example.dim()
    ep = torch.export.export(model, (example,), dynamic_shapes=({dim: Dim("batch")},))
    n = example.shape[dim]
    for size in (n, n):
        shape = list(example.shape)
        shape[dim] = size
        x = torch.randn(shape, dtype=example.dtype)
        with torch.no_grad():
            expected = model(x)
            got = ep.module()(x)
        if got.shape != expected.shape or not torch.allclose(got, expected, rtol=1e-5, atol=1e-5):
            raise RuntimeError(f"the exported program differs from eager at size {size}")
    return ep
