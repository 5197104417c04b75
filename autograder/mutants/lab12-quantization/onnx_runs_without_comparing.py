# Mutant: checks only that ONNX Runtime runs the model and returns an output of the right shape
# replaces: onnx_matches
# must fail: hidden_onnx_matches


def onnx_matches(model, example, atol=1e-5):
    program = torch.onnx.export(model, (example,), dynamo=True, verbose=False)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(program.model_proto.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: example.numpy()})[0]
    with torch.no_grad():
        expected = model(example).numpy()
    return bool(got.shape == expected.shape)
