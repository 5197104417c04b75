# Mutant: stores each size as it was given (a NumPy int stays a NumPy int) instead of a Python int
# replaces: copy_vs_zero_copy
# must fail: hidden_copy_vs_zero_copy


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
        t = torch.ones(n)
        rows.append({"n": n, "nbytes": n * 4,
                     "copy_s": best(lambda: jnp.array(t.numpy())),
                     "zero_copy_s": best(lambda: jnp.from_dlpack(t))})
    return rows
