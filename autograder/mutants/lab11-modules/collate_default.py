# Mutant: calls the built-in it was asked to rebuild
# replaces: collate
# must fail: test_collate, hidden_collate
import torch.utils.data


def collate(batch):
    return torch.utils.data.default_collate(batch)
