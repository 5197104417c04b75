# Mutant: records Dynamo's graph as the forward graph and runs it directly, never going through AOTAutograd
# replaces: recording_backend
# must fail: test_recording_backend, hidden_recording_backend


def recording_backend():
    dynamo_graphs, forward_graphs, backward_graphs = [], [], []

    def backend(gm, example_inputs):
        dynamo_graphs.append(gm)
        forward_graphs.append(gm)
        return gm.forward

    backend.dynamo_graphs = dynamo_graphs
    backend.forward_graphs = forward_graphs
    backend.backward_graphs = backward_graphs
    return backend
