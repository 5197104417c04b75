# Mutant: trusts the exporter and returns True without running anything
# replaces: onnx_matches
# must fail: test_onnx_matches, hidden_onnx_matches


def onnx_matches(model, example, atol=1e-5):
    torch.onnx.export(model, (example,), dynamo=True, verbose=False)
    return True
