# Mutant: dynamic quantization to float16 instead of qint8
# replaces: quantized_linear_error
# must fail: test_quantized_linear_error, hidden_quantized_linear_error


def quantized_linear_error(model, data):
    qmodel = quantize_dynamic(model, {nn.Linear}, dtype=torch.float16)

    def size(m):
        buffer = io.BytesIO()
        torch.save(m.state_dict(), buffer)
        return len(buffer.getvalue())

    with torch.no_grad():
        error = (qmodel(data) - model(data)).abs()
    return {"float_bytes": size(model), "quantized_bytes": size(qmodel),
            "max_abs_error": float(error.max()), "mean_abs_error": float(error.mean())}
