# Mutant: counts the kernels of the first graph's code only (a graph break makes more)
# replaces: inductor_kernel_count
# must fail: hidden_inductor_kernel_count


def inductor_kernel_count(fn, *args):
    _, codes = run_and_get_code(torch.compile(fn), *args)
    if not codes:
        return 0
    return codes[0].count("async_compile.cpp_pybinding(") + codes[0].count("async_compile.triton(")
