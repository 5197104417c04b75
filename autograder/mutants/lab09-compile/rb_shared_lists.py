# Mutant: keeps the three lists at module level, so every backend it returns shares them
# replaces: recording_backend
# must fail: hidden_recording_backend
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

RECORDED = {"dynamo": [], "forward": [], "backward": []}


def recording_backend():
    def forward_compiler(gm, example_inputs):
        RECORDED["forward"].append(gm)
        return make_boxed_func(gm.forward)

    def backward_compiler(gm, example_inputs):
        RECORDED["backward"].append(gm)
        return make_boxed_func(gm.forward)

    aot = aot_autograd(fw_compiler=forward_compiler, bw_compiler=backward_compiler)

    def backend(gm, example_inputs):
        RECORDED["dynamo"].append(gm)
        return aot(gm, example_inputs)

    backend.dynamo_graphs = RECORDED["dynamo"]
    backend.forward_graphs = RECORDED["forward"]
    backend.backward_graphs = RECORDED["backward"]
    return backend
