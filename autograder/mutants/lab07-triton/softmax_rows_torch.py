# Mutant: calls torch.softmax instead of launching a Triton kernel
# replaces: softmax_rows
# must fail: test_softmax_rows, hidden_softmax_rows


def softmax_rows(x):
    if x.dim() != 2:
        raise ValueError("softmax_rows needs a 2-D tensor")
    if x.shape[1] > MAX_COLS:
        raise ValueError("rows longer than MAX_COLS")
    return torch.softmax(x, dim=1)
