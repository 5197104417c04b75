# Mutant: takes jnp.asarray(t.numpy()) for the zero-copy path ("NumPy views are free"), but JAX copies
# replaces: copy_vs_zero_copy
# must fail: test_copy_vs_zero_copy, hidden_copy_vs_zero_copy


def copy_vs_zero_copy(sizes, repeat=5):
    def best(fn):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn().block_until_ready()
            times.append(time.perf_counter() - start)
        return min(times)

    rows = []
    for n in sizes:
        t = torch.ones(int(n))
        rows.append({"n": int(n), "nbytes": t.nbytes,
                     "copy_s": best(lambda: jnp.array(t.numpy())),
                     "zero_copy_s": best(lambda: jnp.asarray(t.numpy()))})
    return rows
