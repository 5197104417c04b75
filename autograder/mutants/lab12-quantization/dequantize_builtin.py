# Mutant: wraps q in a quantized tensor and calls torch's dequantize
# replaces: dequantize
# must fail: test_dequantize, hidden_dequantize


def dequantize(q, scale, zero_point, axis=None):
    if axis is None:
        return torch._make_per_tensor_quantized_tensor(q, float(scale), int(zero_point)).dequantize()
    return torch._make_per_channel_quantized_tensor(q, torch.as_tensor(scale).double(),
                                                    torch.as_tensor(zero_point).long(), axis % q.dim()).dequantize()
