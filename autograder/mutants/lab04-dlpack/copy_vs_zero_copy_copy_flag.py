# Mutant: times jnp.from_dlpack(t, copy=True) as the copy, which in JAX 0.10.2 on the CPU does not copy
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
                     "copy_s": best(lambda: jnp.from_dlpack(t, copy=True)),
                     "zero_copy_s": best(lambda: jnp.from_dlpack(t))})
    return rows
