"""Fixtures for the real agent CLIs (installed from npm by scripts/test into
<target>/clients): a real engine, and a stand-in of a vendor's model API."""

import contextlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "clients" / "python" / "tests"))

from pad_engine import Engine, free_port, pad_binary  # noqa: E402


def clients_dir() -> pathlib.Path:
    """Where scripts/test installed the CLIs (tests/clients/package.json)."""
    explicit = os.environ.get("PAD_CLIENTS_DIR")
    if explicit:
        return pathlib.Path(explicit)
    return pathlib.Path(pad_binary()).resolve().parents[1] / "clients"


@pytest.fixture(scope="module")
def engine():
    port = free_port()
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{port}"])
    e.url = f"http://127.0.0.1:{port}/mcp"
    e.token = open(os.path.join(e.data, "mcp-http.token")).read().strip()
    yield e
    e.stop()


class Standin:
    """tests/clients/standin.py on a free loopback port, with a script."""

    def __init__(self, steps):
        self.dir = tempfile.TemporaryDirectory()
        self.port = free_port()
        self.log = os.path.join(self.dir.name, "requests.jsonl")
        script = os.path.join(self.dir.name, "script.json")
        with open(script, "w") as f:
            json.dump(steps, f)
        self.proc = subprocess.Popen([sys.executable, str(HERE / "standin.py"), str(self.port), script, self.log],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready"
        self.url = f"http://127.0.0.1:{self.port}"

    def requests(self, api):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [r["body"] for r in map(json.loads, f) if r["api"] == api]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.dir.cleanup()


@pytest.fixture
def standin():
    made = []

    def start(steps):
        s = Standin(steps)
        made.append(s)
        return s

    yield start
    for s in made:
        s.stop()


class Cli:
    """Runs an installed CLI with Node 22 first on PATH and a HOME of its own."""

    def __init__(self):
        self.root = clients_dir()
        bin_dir = self.root / "node_modules" / ".bin"
        node = self.root / "node_modules" / "node" / "bin"
        if not (bin_dir / "codex").exists():
            raise RuntimeError(f"the agent CLIs are not installed in {self.root}: run ./scripts/test "
                               "(it installs tests/clients/package.json there), or set PAD_CLIENTS_DIR")
        self.path = f"{node}:{bin_dir}:{os.environ.get('PATH', '')}"
        self.tmp = tempfile.TemporaryDirectory()
        self.home = pathlib.Path(self.tmp.name) / "home"
        self.work = pathlib.Path(self.tmp.name) / "work"
        self.home.mkdir()
        self.work.mkdir()

    def run(self, args, env=None, timeout=120):
        full = {"PATH": self.path, "HOME": str(self.home), "TERM": "dumb", "NO_COLOR": "1",
                "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1", "CI": "1", **(env or {})}
        return subprocess.run(args, env=full, cwd=self.work, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def write(self, rel, text):
        p = self.home / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


@pytest.fixture
def cli():
    c = Cli()
    yield c
    c.tmp.cleanup()


@contextlib.contextmanager
def nothing():
    yield
