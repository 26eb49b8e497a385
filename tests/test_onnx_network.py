"""The cv2.dnn wrapper: networks kept per input shape give the same outputs as a network set up anew."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.face_classifier import MODEL_PATH
from vision.onnx_network import OnnxNetwork


def test_networks_kept_per_shape_and_recycled_answer_as_a_fresh_one():
    pooled = OnnxNetwork(MODEL_PATH, "face classifier", shapes_kept=2)
    rng = np.random.default_rng(5)
    for batch in [1, 5, 8, 5, 1, 3, 8, 8, 1]:  # more shapes than kept: the oldest network is reused
        blob = rng.normal(size=(batch, 3, 32, 32)).astype(np.float32)
        fresh = cv2.dnn.readNetFromONNX(str(MODEL_PATH))
        fresh.setInput(blob)
        np.testing.assert_allclose(pooled.forward(blob), fresh.forward(), atol=1e-4)
    assert len(pooled._nets) == 2


def test_a_missing_model_is_reported_when_first_needed(tmp_path):
    network = OnnxNetwork(tmp_path / "none.onnx", "test model", shapes_kept=3)
    with pytest.raises(FileNotFoundError, match="test model model not found"):
        network.forward(np.zeros((1, 3, 32, 32), np.float32))
