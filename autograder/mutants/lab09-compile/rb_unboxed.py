# Mutant: its compilers return the GraphModule itself, not a boxed function: AOTAutograd warns on every call
# replaces: recording_backend
# must fail: test_recording_backend, hidden_recording_backend
from torch._dynamo.backends.common import aot_autograd


def recording_backend():
    dynamo_graphs, forward_graphs, backward_graphs = [], [], []

    def forward_compiler(gm, example_inputs):
        forward_graphs.append(gm)
        return gm

    def backward_compiler(gm, example_inputs):
        backward_graphs.append(gm)
        return gm

    aot = aot_autograd(fw_compiler=forward_compiler, bw_compiler=backward_compiler)

    def backend(gm, example_inputs):
        dynamo_graphs.append(gm)
        return aot(gm, example_inputs)

    backend.dynamo_graphs = dynamo_graphs
    backend.forward_graphs = forward_graphs
    backend.backward_graphs = backward_graphs
    return backend
