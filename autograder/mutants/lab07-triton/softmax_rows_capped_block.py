# Mutant: caps BLOCK at 1024 "to save registers", silently dropping the end of longer rows
# replaces: softmax_rows
# must fail: hidden_softmax_rows


def softmax_rows(x):
    if x.dim() != 2:
        raise ValueError("softmax_rows needs a 2-D tensor")
    n_rows, n_cols = x.shape
    if n_cols > MAX_COLS:
        raise ValueError("rows longer than MAX_COLS")
    out = torch.zeros((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if out.numel():
        block = min(triton.next_power_of_2(n_cols), 1024)
        softmax_kernel[(n_rows,)](x, out, min(n_cols, block), x.stride(0), x.stride(1), out.stride(0), BLOCK=block)
    return out
