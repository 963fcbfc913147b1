"""Setting up Agent Zero's real loop from a checkout, for tests/real and the
iteration benchmark: a copy of the checkout with the plugin installed the
way Agent Zero's users install plugins — `pad agent-zero zip`'s package
taken by Agent Zero's own installer (`install_from_zip`, Plugins → Install →
ZIP) — its heavy start-up imports stood in for, and its models pointed at a
stand-in on loopback."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import types


def stand_in_heavy_modules():
    """`sentence_transformers` and `whisper` are imported at start-up and used
    only by the local embedder and by speech, which these runs do not use;
    `turtle` (below) by nothing."""
    st = types.ModuleType("sentence_transformers")

    class SentenceTransformer:
        def __init__(self, *a, **k):
            raise RuntimeError("no local embedder here: embeddings come from the stand-in API")

    st.SentenceTransformer = SentenceTransformer
    sys.modules.setdefault("sentence_transformers", st)
    sys.modules.setdefault("whisper", types.ModuleType("whisper"))
    # Its plugin installer imports `turtle` (for a name it never uses), which
    # needs Tk's libraries; the test container has none.
    try:
        import tkinter  # noqa: F401
    except ImportError:
        turtle = types.ModuleType("turtle")
        turtle.stamp = None
        sys.modules.setdefault("turtle", turtle)


def prepare(a0_dir: str, into: pathlib.Path, pad_bin: str, settings=None) -> pathlib.Path:
    """Copies the checkout (Agent Zero writes into its own tree), makes the
    copy the running Agent Zero (cwd, sys.path) and installs the plugin's
    ZIP with Agent Zero's own installer; `settings` (the engine's URL, a
    file holding a token) go into the ZIP, as for Agent Zero in Docker."""
    root = into / "agent-zero"
    shutil.copytree(a0_dir, root, ignore=shutil.ignore_patterns(".git", "__pycache__", "logs", "tmp"))
    package = into / "scratchpad.zip"
    extra = ["--url", settings[0], "--token-file", str(settings[1])] if settings else []
    done = subprocess.run([pad_bin, "agent-zero", "zip", str(package), *extra], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    enter(root)
    from plugins._plugin_installer.helpers.install import install_from_zip

    installed = install_from_zip(str(package))
    if not installed.get("success") or installed.get("plugin_name") != "scratchpad":
        raise RuntimeError(f"Agent Zero's installer did not take the ZIP: {installed}")
    return root


def enter(root: pathlib.Path) -> None:
    """Makes the prepared copy at `root` the running Agent Zero (cwd,
    sys.path), as in its Docker image; also how a restart comes back to it."""
    os.chdir(root)
    sys.path.insert(0, str(root))
    stand_in_heavy_modules()
    from helpers import runtime

    runtime.args["dockerized"] = "true"


def use_models(root: pathlib.Path, api_base: str, embeddings: bool = False) -> None:
    """Chat and utility models (and, if asked, the embedder) from `api_base`,
    as Agent Zero's "Other OpenAI compatible" provider reaches any server;
    its `_memory` plugin stays on only when the embedder is served."""
    import yaml
    from helpers import plugins

    cfg = yaml.safe_load((root / "plugins" / "_model_config" / "default_config.yaml").read_text())
    for key, name in (("chat_model", "scripted-chat"), ("utility_model", "scripted-utility")):
        cfg[key].update(provider="other", name=name, api_base=api_base, vision=False)
    if embeddings:
        # "openai/…": Agent Zero passes an embedding model of an OpenAI-style
        # provider to LiteLLM without a provider prefix, which LiteLLM refuses.
        cfg["embedding_model"].update(provider="other", name="openai/all-minilm-l6-v2", api_base=api_base)
    target = root / "usr" / "plugins" / "_model_config" / "config.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(cfg))
    os.environ.setdefault("API_KEY_OTHER", "none")
    plugins.toggle_plugin("_memory", embeddings)
