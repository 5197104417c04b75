# Mutant: looks the op up in a table copied from the CUDA autocast docs (CUDA's lists are not CPU's)
# replaces: autocast_policy
# must fail: test_autocast_policy, hidden_autocast_policy
import torch
import torch.nn.functional as F

_CUDA_TABLE = {
    torch.mm: "lower", torch.matmul: "lower", torch.bmm: "lower", torch.addmm: "lower", torch.baddbmm: "lower",
    torch.mv: "lower", torch.addmv: "lower", F.linear: "lower", F.conv1d: "lower", F.conv2d: "lower",
    F.conv3d: "lower", F.conv_transpose2d: "lower", F.prelu: "lower", torch.einsum: "lower",
    F.scaled_dot_product_attention: "lower",
    torch.softmax: "fp32", F.softmax: "fp32", F.log_softmax: "fp32", F.layer_norm: "fp32", torch.sum: "fp32",
    torch.prod: "fp32", torch.exp: "fp32", F.mse_loss: "fp32", F.l1_loss: "fp32", F.cross_entropy: "fp32",
    F.nll_loss: "fp32", F.binary_cross_entropy_with_logits: "fp32", torch.cdist: "fp32", torch.norm: "fp32",
    torch.linalg.vector_norm: "fp32", F.grid_sample: "fp32",
    torch.cat: "promote", torch.stack: "promote", torch.index_copy: "promote", torch.addcmul: "promote",
    torch.dot: "promote", torch.atan2: "promote",
}


def autocast_policy(op, *args):
    return _CUDA_TABLE.get(op, "unchanged")
