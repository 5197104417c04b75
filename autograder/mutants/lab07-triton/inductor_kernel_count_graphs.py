# Mutant: returns how many code modules came back (one per graph) instead of counting the kernels in them
# replaces: inductor_kernel_count
# must fail: test_inductor_kernel_count


def inductor_kernel_count(fn, *args):
    _, codes = run_and_get_code(torch.compile(fn), *args)
    return len(codes)
