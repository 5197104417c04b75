# Mutant: creates the tensor inside the timed region, so both paths pay for allocating and filling it
# replaces: copy_vs_zero_copy
# must fail: test_copy_vs_zero_copy, hidden_copy_vs_zero_copy


def copy_vs_zero_copy(sizes, repeat=5):
    rows = []
    for n in sizes:
        copy_times, zero_times = [], []
        for _ in range(repeat):
            start = time.perf_counter()
            jnp.array(torch.ones(int(n)).numpy()).block_until_ready()
            copy_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            jnp.from_dlpack(torch.ones(int(n))).block_until_ready()
            zero_times.append(time.perf_counter() - start)
        rows.append({"n": int(n), "nbytes": 4 * int(n), "copy_s": min(copy_times), "zero_copy_s": min(zero_times)})
    return rows
