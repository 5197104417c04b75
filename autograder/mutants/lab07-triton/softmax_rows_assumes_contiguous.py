# Mutant: addresses x as if it were contiguous (row stride n_cols, column stride 1)
# replaces: softmax_rows
# must fail: hidden_softmax_rows


def softmax_rows(x):
    if x.dim() != 2:
        raise ValueError("softmax_rows needs a 2-D tensor")
    n_rows, n_cols = x.shape
    if n_cols > MAX_COLS:
        raise ValueError("rows longer than MAX_COLS")
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if out.numel():
        softmax_kernel[(n_rows,)](x, out, n_cols, n_cols, 1, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return out
