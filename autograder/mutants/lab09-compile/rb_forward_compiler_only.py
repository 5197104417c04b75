# Mutant: gives aot_autograd only a forward compiler, which AOTAutograd then also uses for the backward graph
# replaces: recording_backend
# must fail: test_recording_backend, hidden_recording_backend
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd


def recording_backend():
    dynamo_graphs, forward_graphs, backward_graphs = [], [], []

    def compiler(gm, example_inputs):
        forward_graphs.append(gm)
        return make_boxed_func(gm.forward)

    aot = aot_autograd(fw_compiler=compiler)

    def backend(gm, example_inputs):
        dynamo_graphs.append(gm)
        return aot(gm, example_inputs)

    backend.dynamo_graphs = dynamo_graphs
    backend.forward_graphs = forward_graphs
    backend.backward_graphs = backward_graphs
    return backend
