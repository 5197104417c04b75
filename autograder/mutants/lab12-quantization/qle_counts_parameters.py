# Mutant: measures size as the bytes of parameters() (the quantized copy keeps its packed weights elsewhere)
# replaces: quantized_linear_error
# must fail: test_quantized_linear_error, hidden_quantized_linear_error


def quantized_linear_error(model, data):
    qmodel = quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)

    def size(m):
        return sum(p.numel() * p.element_size() for p in m.parameters())

    with torch.no_grad():
        error = (qmodel(data) - model(data)).abs()
    return {"float_bytes": size(model), "quantized_bytes": size(qmodel),
            "max_abs_error": float(error.max()), "mean_abs_error": float(error.mean())}
