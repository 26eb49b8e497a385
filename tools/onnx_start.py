"""Start training from an exported network (the shipped ONNX model), whose torch weights are not kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def weights_from_onnx(net, path: Path) -> None:
    """Load an exported nn.Sequential of Conv2d (each followed by a BatchNorm2d, or with a bias of its
    own) and Linear layers. Exporting folded each BatchNorm into the convolution before it, so that
    BatchNorm starts as the identity (mean 0, variance 1 - eps, scale 1) carrying the folded bias: in
    eval mode the network gives the exported outputs. Keep those BatchNorms in eval mode while
    training on (their statistics are folded away); their scale and bias still learn."""
    import onnx
    import torch
    import torch.nn as nn
    from onnx import numpy_helper

    model = onnx.load(str(path))
    tensors = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    exported = [(node, [np.array(tensors[name]) for name in node.input[1:] if name in tensors])
                for node in model.graph.node if node.op_type in ("Conv", "Gemm")]
    modules = list(net)
    layers = [module for module in modules if isinstance(module, (nn.Conv2d, nn.Linear))]
    if len(layers) != len(exported):
        raise SystemExit(f"{path} has {len(exported)} weighted layers, this network {len(layers)}: "
                         "build it as the exported one was built")
    with torch.no_grad():
        for layer, (node, arrays) in zip(layers, exported):
            weight = arrays[0]
            bias = arrays[1] if len(arrays) > 1 else np.zeros(weight.shape[0], np.float32)
            if node.op_type == "Gemm" and not any(a.name == "transB" and a.i == 1 for a in node.attribute):
                weight = weight.T
            if tuple(layer.weight.shape) != weight.shape:
                raise SystemExit(f"{path}: a layer of shape {weight.shape} where this network has "
                                 f"{tuple(layer.weight.shape)}: build it as the exported one was built")
            layer.weight.copy_(torch.from_numpy(weight))
            after = modules[modules.index(layer) + 1] if modules.index(layer) + 1 < len(modules) else None
            if isinstance(after, nn.BatchNorm2d):
                assert after.running_mean is not None and after.running_var is not None
                after.weight.fill_(1.0)
                after.bias.copy_(torch.from_numpy(bias))
                after.running_mean.zero_()
                after.running_var.fill_(1.0 - after.eps)
            elif layer.bias is not None:
                layer.bias.copy_(torch.from_numpy(bias))


def freeze_norms(net) -> None:
    """Put every BatchNorm of a network started by weights_from_onnx back in eval mode (after net.train())."""
    import torch.nn as nn

    for module in net.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eval()
