# Mutant: quantizes the model in place (the caller's model is replaced, and compared with itself)
# replaces: quantized_linear_error
# must fail: test_quantized_linear_error, hidden_quantized_linear_error


def quantized_linear_error(model, data):
    def size(m):
        buffer = io.BytesIO()
        torch.save(m.state_dict(), buffer)
        return len(buffer.getvalue())

    float_bytes = size(model)
    with torch.no_grad():
        reference = model(data)
    qmodel = quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8, inplace=True)
    with torch.no_grad():
        error = (qmodel(data) - reference).abs()
    return {"float_bytes": float_bytes, "quantized_bytes": size(qmodel),
            "max_abs_error": float(error.max()), "mean_abs_error": float(error.mean())}
