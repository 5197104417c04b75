# Mutant: returns NumPy's comparison result (numpy.bool_), not a Python bool
# replaces: onnx_matches
# must fail: test_onnx_matches, hidden_onnx_matches


def onnx_matches(model, example, atol=1e-5):
    program = torch.onnx.export(model, (example,), dynamo=True, verbose=False)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(program.model_proto.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: example.numpy()})[0]
    with torch.no_grad():
        expected = model(example).numpy()
    return got.shape == expected.shape and np.abs(got - expected).max() <= atol
