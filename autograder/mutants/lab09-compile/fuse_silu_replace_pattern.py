# Mutant: uses subgraph_rewriter.replace_pattern per spelling; it will not match a sigmoid with other users
# replaces: fuse_silu
# must fail: hidden_fuse_silu
import torch
import torch.nn.functional as F
from torch.fx import subgraph_rewriter


def fuse_silu(gm):
    patterns = [
        lambda x: x * torch.sigmoid(x), lambda x: torch.sigmoid(x) * x,
        lambda x: x * x.sigmoid(), lambda x: x.sigmoid() * x,
        lambda x: torch.mul(x, torch.sigmoid(x)), lambda x: torch.mul(torch.sigmoid(x), x),
        lambda x: x.mul(x.sigmoid()), lambda x: x.sigmoid().mul(x),
        lambda x: x.mul(torch.sigmoid(x)), lambda x: torch.sigmoid(x).mul(x),
    ]
    for pattern in patterns:
        subgraph_rewriter.replace_pattern(gm, pattern, lambda x: F.silu(x))
    gm.graph.lint()
    gm.recompile()
    return gm
