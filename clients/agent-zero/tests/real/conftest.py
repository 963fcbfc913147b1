"""Agent Zero's real loop, from its source (A0_DIR: a checkout of
agent0ai/agent-zero, run with a Python that has its packages; see
docs/agent-zero.md, "Testing in Agent Zero's real loop"), with the plugin
installed by `pad agent-zero install`, its chat and utility models a
scripted stand-in on loopback (model_standin.py) and a real engine.

The checkout is copied first: Agent Zero writes settings, chats and logs
into its own tree. Its `_memory` plugin is switched off (its embedder comes
from Hugging Face, unreachable here), and `sentence_transformers` and
`whisper` — imported at start-up, used only by that embedder and by speech —
are stood in for."""

import os
import pathlib
import shutil
import subprocess
import sys
import types

import pytest

HERE = pathlib.Path(__file__).resolve().parent
A0_DIR = os.environ.get("A0_DIR")
sys.path.insert(0, str(HERE.parents[2] / "python" / "tests"))
sys.path.insert(0, str(HERE))

collect_ignore_glob = [] if A0_DIR else ["test_*.py"]


def _stand_in_heavy_modules():
    st = types.ModuleType("sentence_transformers")

    class SentenceTransformer:
        def __init__(self, *a, **k):
            raise RuntimeError("no local embedder in these tests (Agent Zero's memory plugin is off)")

    st.SentenceTransformer = SentenceTransformer
    sys.modules.setdefault("sentence_transformers", st)
    sys.modules.setdefault("whisper", types.ModuleType("whisper"))


@pytest.fixture(scope="session")
def a0(tmp_path_factory):
    from pad_engine import pad_binary

    root = tmp_path_factory.mktemp("a0") / "agent-zero"
    shutil.copytree(A0_DIR, root, ignore=shutil.ignore_patterns(".git", "__pycache__", "logs", "tmp"))
    done = subprocess.run([pad_binary(), "agent-zero", "install", str(root)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    os.chdir(root)
    sys.path.insert(0, str(root))
    _stand_in_heavy_modules()
    from helpers import runtime

    runtime.args["dockerized"] = "true"
    return root


@pytest.fixture(scope="session")
def model(a0):
    import yaml
    from helpers import plugins

    from model_standin import ModelStandin

    standin = ModelStandin()
    cfg = yaml.safe_load((a0 / "plugins" / "_model_config" / "default_config.yaml").read_text())
    for key, name in (("chat_model", "scripted-chat"), ("utility_model", "scripted-utility")):
        cfg[key].update(provider="other", name=name, api_base=standin.api_base, vision=False)
    target = a0 / "usr" / "plugins" / "_model_config" / "config.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    import json

    target.write_text(json.dumps(cfg))
    os.environ.setdefault("API_KEY_OTHER", "none")
    plugins.toggle_plugin("_memory", False)
    yield standin
    standin.stop()


@pytest.fixture(scope="session")
def engine(a0):
    from pad_engine import Engine

    e = Engine(semantic=True)
    os.environ["PAD_SOCKET"] = e.socket
    yield e
    e.stop()
