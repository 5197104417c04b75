# Mutant: sorts the sizes "for a nicer plot", so the rows no longer follow the order given
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
    for n in sorted(int(s) for s in sizes):
        t = torch.ones(n)
        rows.append({"n": n, "nbytes": t.nbytes,
                     "copy_s": best(lambda: jnp.array(t.numpy())),
                     "zero_copy_s": best(lambda: jnp.from_dlpack(t))})
    return rows
