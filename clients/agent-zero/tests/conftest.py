"""The plugin in a stand-in Agent Zero: a folder laid out as a checkout, with
tests/standins for the few Agent Zero modules the plugin imports, the plugin
put there by the real `pad agent-zero install`, and a real engine.

Agent Zero is on no package registry, so CI cannot have it; tests/real runs
the plugin in Agent Zero's own loop when A0_DIR names a checkout, and checks
these stand-ins against the real signatures."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
PLUGIN = HERE.parent
sys.path.insert(0, str(HERE.parents[1] / "python" / "tests"))

from pad_engine import Engine, pad_binary  # noqa: E402


def install(root: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([pad_binary(), "agent-zero", "install", str(root)], capture_output=True,
                          text=True, timeout=60)


@pytest.fixture(scope="session")
def a0_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("a0")
    shutil.copytree(HERE / "standins", root, dirs_exist_ok=True)
    done = install(root)
    assert done.returncode == 0, done.stderr
    stale = [str(f.relative_to(PLUGIN)) for f in PLUGIN.rglob("*")
             if f.is_file() and "tests" not in f.relative_to(PLUGIN).parts and "__pycache__" not in f.parts
             and f.read_bytes() != (root / "usr/plugins/scratchpad" / f.relative_to(PLUGIN)).read_bytes()]
    assert not stale, f"{pad_binary()} carries an older plugin ({', '.join(stale)}): rebuild it (cargo build)"
    sys.path.insert(0, str(root))
    return root


@pytest.fixture(scope="session")
def engine():
    e = Engine(semantic=True)
    yield e
    e.stop()


@pytest.fixture()
def plugin(a0_root, engine, monkeypatch):
    """The installed plugin's modules, talking to the engine, and its watcher
    stopped after each test."""
    monkeypatch.setenv("PAD_SOCKET", engine.socket)
    from usr.plugins.scratchpad.helpers import chat, pad, watcher
    from helpers import print_style
    from loop import Loop

    config = a0_root / "usr" / "plugins" / "scratchpad" / "config.json"
    print_style.lines.clear()
    pad.health.trouble.clear()
    pad._configs.clear()  # each test's settings are read afresh
    yield type("Plugin", (), {"chat": chat, "pad": pad, "watcher": watcher, "root": a0_root,
                              "config": config, "log": print_style.lines,
                              "Loop": Loop})
    watcher.stop()
    watcher.take_pending()
    pad.drop_client()
    if config.exists():
        config.unlink()


@pytest.fixture(scope="session")
def http_engine():
    """An engine serving HTTP on loopback (as Agent Zero in Docker reaches it)
    and a token for every pad."""
    import socket as socket_module

    from pad_engine import Engine

    with socket_module.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{port}"])
    e.url = f"http://127.0.0.1:{port}"
    with e.client() as owner:
        e.token = owner.create_token("agent-zero", ["*"])
    yield e
    e.stop()
