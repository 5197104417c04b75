# Mutant: raises RuntimeError on ragged tensors without saying which shapes differ
# replaces: collate
# must fail: test_collate, hidden_collate


def collate(batch):
    elem = batch[0]
    if isinstance(elem, torch.Tensor):
        for _i, t in enumerate(batch):
            if t.shape != elem.shape:
                raise RuntimeError("cannot collate tensors of different shapes")
        return torch.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OSUV":
            raise TypeError(f"cannot collate NumPy arrays of dtype {elem.dtype}")
        return collate([torch.as_tensor(a) for a in batch])
    if isinstance(elem, (np.bool_, np.number)):
        return torch.as_tensor(batch)
    if isinstance(elem, float):
        return torch.tensor(batch, dtype=torch.float64)
    if isinstance(elem, int):
        return torch.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return type(elem)((key, collate([d[key] for d in batch])) for key in elem)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(collate(samples) for samples in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [collate(samples) for samples in zip(*batch)]
    raise TypeError(f"cannot collate {type(elem).__name__}")
