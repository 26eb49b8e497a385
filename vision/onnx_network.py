"""An ONNX model run by ONNX Runtime on one thread, loaded on first use.

ONNX Runtime runs these small networks 1.4 (the face classifier) to 2.2 (the die detector) times faster
than cv2.dnn did on one core, any input shape alike. One thread: the reader runs once per settled throw
beside the camera loop and the web server, and its time is then what it costs whoever else is running.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import onnxruntime


class OnnxNetwork:
    def __init__(self, model_path: Path | str, what: str):
        self.model_path = Path(model_path)
        self._what = what
        self._session: onnxruntime.InferenceSession | None = None
        self._input = ""
        self._loading = threading.Lock()

    def forward(self, blob: np.ndarray) -> np.ndarray:
        """The network's (first) output for an NCHW float32 blob. Safe from several threads at once."""
        session = self._session or self._load()
        output = session.run(None, {self._input: blob})[0]
        return np.asarray(output, np.float32)

    def _load(self) -> onnxruntime.InferenceSession:
        with self._loading:
            if self._session is None:
                if not self.model_path.is_file():
                    raise FileNotFoundError(f"{self._what} model not found: {self.model_path}")
                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                options.log_severity_level = 3  # errors only: not its notes on the graph
                session = onnxruntime.InferenceSession(str(self.model_path), options,
                                                       providers=["CPUExecutionProvider"])
                self._input = session.get_inputs()[0].name
                self._session = session  # last: another thread may run it as soon as it is set
            return self._session
