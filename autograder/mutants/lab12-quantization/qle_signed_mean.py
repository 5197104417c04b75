# Mutant: the mean error is the mean of the signed differences (errors of both signs cancel)
# replaces: quantized_linear_error
# must fail: hidden_quantized_linear_error


def quantized_linear_error(model, data):
    qmodel = quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)

    def size(m):
        buffer = io.BytesIO()
        torch.save(m.state_dict(), buffer)
        return len(buffer.getvalue())

    with torch.no_grad():
        diff = qmodel(data) - model(data)
    return {"float_bytes": size(model), "quantized_bytes": size(qmodel),
            "max_abs_error": float(diff.abs().max()), "mean_abs_error": abs(float(diff.mean()))}
