# Mutant: never checks the row length or the number of dims
# replaces: softmax_rows
# must fail: hidden_softmax_rows


def softmax_rows(x):
    n_rows, n_cols = x.shape[0], x.shape[-1]
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if out.numel():
        softmax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), x.stride(-1), out.stride(0),
                                  BLOCK=triton.next_power_of_2(n_cols))
    return out
