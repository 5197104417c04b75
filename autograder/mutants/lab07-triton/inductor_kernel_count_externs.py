# Mutant: also counts library calls (extern_kernels.mm, ...) as kernels
# replaces: inductor_kernel_count
# must fail: hidden_inductor_kernel_count


def inductor_kernel_count(fn, *args):
    _, codes = run_and_get_code(torch.compile(fn), *args)
    markers = ("async_compile.cpp_pybinding(", "async_compile.triton(", "extern_kernels.")
    return sum(code.count(marker) for code in codes for marker in markers)
