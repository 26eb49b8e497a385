"""An ONNX model run by cv2.dnn: loaded on first use, one forward pass at a time (a cv2.dnn.Net holds
its input between setInput and forward, so two threads must not interleave them)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

import cv2
import numpy as np

# OpenCV 5.0 runs these small networks with its new engine by default; its classic one is 1.4 to 1.7
# times faster on the face classifier here, the same on the detector, with the same outputs. OpenCV 4
# and 5.1 have no such argument; 5.1's one engine runs the classifier faster than either of them.
_ENGINE = {"engine": cv2.dnn.ENGINE_CLASSIC} if hasattr(cv2.dnn, "ENGINE_CLASSIC") else {}


class OnnxNetwork:
    """`shapes_kept`: cv2.dnn sets a network up again whenever its input shape changes, which made
    a frame's passes a fifth to a third slower; so up to `shapes_kept` networks are kept, one per input
    shape, the least recently used taking a new shape."""

    def __init__(self, model_path: Path | str, what: str, shapes_kept: int = 1):
        self.model_path = Path(model_path)
        self._what = what
        self._shapes_kept = shapes_kept
        self._nets: OrderedDict[tuple[int, ...], cv2.dnn.Net] = OrderedDict()
        self._lock = threading.Lock()

    def forward(self, blob: np.ndarray) -> np.ndarray:
        """The network's output for an NCHW float32 blob."""
        with self._lock:
            net = self._net_for(blob.shape)
            net.setInput(blob)
            return np.asarray(net.forward(), np.float32)

    def _net_for(self, shape: tuple[int, ...]) -> cv2.dnn.Net:
        if shape in self._nets:
            self._nets.move_to_end(shape)
            return self._nets[shape]
        if len(self._nets) >= self._shapes_kept:
            # The least recently used network takes the new shape: cv2.dnn sets it up again.
            _, net = self._nets.popitem(last=False)
        else:
            if not self.model_path.is_file():
                raise FileNotFoundError(f"{self._what} model not found: {self.model_path}")
            net = cv2.dnn.readNetFromONNX(str(self.model_path), **_ENGINE)
        self._nets[shape] = net
        return net
