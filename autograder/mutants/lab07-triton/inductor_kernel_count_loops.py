# Mutant: counts the C++ for-loops in the generated code instead of the kernels
# replaces: inductor_kernel_count
# must fail: hidden_inductor_kernel_count


def inductor_kernel_count(fn, *args):
    _, codes = run_and_get_code(torch.compile(fn), *args)
    return sum(code.count("for(") for code in codes)
