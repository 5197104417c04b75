# Mutant: uses BLOCK = n_cols, but tl.arange needs a power of two
# replaces: softmax_rows
# must fail: test_softmax_rows, hidden_softmax_rows


def softmax_rows(x):
    if x.dim() != 2:
        raise ValueError("softmax_rows needs a 2-D tensor")
    n_rows, n_cols = x.shape
    if n_cols > MAX_COLS:
        raise ValueError("rows longer than MAX_COLS")
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if out.numel():
        softmax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), x.stride(1), out.stride(0), BLOCK=n_cols)
    return out
