# Mutant: the textbook formula exp(x) / sum(exp(x)), without subtracting the row max first
# replaces: softmax_rows
# must fail: test_softmax_rows, hidden_softmax_rows


@triton.jit
def softmax_nomax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, x_col_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols * x_col_stride, mask=mask, other=-float("inf")).to(tl.float32)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, (num / tl.sum(num, axis=0)).to(out_ptr.dtype.element_ty),
             mask=mask)


def softmax_rows(x):
    if x.dim() != 2:
        raise ValueError("softmax_rows needs a 2-D tensor")
    n_rows, n_cols = x.shape
    if n_cols > MAX_COLS:
        raise ValueError("rows longer than MAX_COLS")
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if out.numel():
        softmax_nomax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), x.stride(1), out.stride(0),
                                        BLOCK=triton.next_power_of_2(n_cols))
    return out
