# Mutant: reads torch._inductor.metrics.generated_kernel_count, which on CPU counts loop nests, not kernels
# replaces: inductor_kernel_count
# must fail: hidden_inductor_kernel_count


def inductor_kernel_count(fn, *args):
    from torch._inductor import metrics

    metrics.reset()
    run_and_get_code(torch.compile(fn), *args)
    return metrics.generated_kernel_count
