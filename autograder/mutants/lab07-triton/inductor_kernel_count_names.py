# Mutant: counts occurrences of the kernel name prefix "cpp_fused", which appears at the definition and the call
# replaces: inductor_kernel_count
# must fail: test_inductor_kernel_count


def inductor_kernel_count(fn, *args):
    _, codes = run_and_get_code(torch.compile(fn), *args)
    return sum(code.count("cpp_fused") + code.count("triton_poi_fused") for code in codes)
