# Mutant: compiles with AOTAutograd only to record the graphs, then runs Dynamo's graph: no backward graph is ever made
# replaces: recording_backend
# must fail: test_recording_backend, hidden_recording_backend
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd


def recording_backend():
    dynamo_graphs, forward_graphs, backward_graphs = [], [], []

    def forward_compiler(gm, example_inputs):
        forward_graphs.append(gm)
        return make_boxed_func(gm.forward)

    def backward_compiler(gm, example_inputs):
        backward_graphs.append(gm)
        return make_boxed_func(gm.forward)

    aot = aot_autograd(fw_compiler=forward_compiler, bw_compiler=backward_compiler)

    def backend(gm, example_inputs):
        dynamo_graphs.append(gm)
        aot(gm, example_inputs)  # records the forward graph ...
        return gm.forward  # ... but runs Dynamo's graph, so AOTAutograd's backward never runs

    backend.dynamo_graphs = dynamo_graphs
    backend.forward_graphs = forward_graphs
    backend.backward_graphs = backward_graphs
    return backend
