"""The plugin as Agent Zero's own installer takes it: `pad agent-zero zip`,
and the plugin's folder complete as it stands (a repository holding just it
installs by Git URL). tests/real installs the ZIP with Agent Zero's own
`install_from_zip` and runs the loop with it."""

import importlib.util
import json
import os
import pathlib
import stat
import subprocess
import zipfile

from pad_engine import pad_binary

PLUGIN = pathlib.Path(__file__).resolve().parents[1]


def tree(root: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and "tests" not in p.relative_to(root).parts and "__pycache__" not in p.parts}


def zip_tree(path: pathlib.Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        names = z.namelist()
        assert all(n.startswith("scratchpad/") for n in names), names
        return {n.removeprefix("scratchpad/"): z.read(n) for n in names}


def run(*args):
    return subprocess.run([pad_binary(), "agent-zero", *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def test_the_zip_holds_what_install_writes_and_the_folder_as_it_stands(tmp_path):
    (tmp_path / "usr").mkdir()
    done = run("install", tmp_path / "usr")
    assert done.returncode == 0, done.stderr
    installed = tree(tmp_path / "usr" / "plugins" / "scratchpad")
    done = run("zip", tmp_path / "scratchpad.zip")
    assert done.returncode == 0, done.stderr
    assert "Plugins → Install → ZIP" in done.stdout
    packed = zip_tree(tmp_path / "scratchpad.zip")
    assert packed == installed
    assert "config.json" not in packed and "plugin.yaml" in packed and "hooks.py" in packed
    assert stat.S_IMODE((tmp_path / "scratchpad.zip").stat().st_mode) == 0o644
    # Complete as it stands: no link in it, nothing the package adds.
    links = [str(p) for p in PLUGIN.rglob("*") if p.is_symlink()]
    assert not links, links
    assert tree(PLUGIN) == packed, "the package differs from clients/agent-zero: rebuild pad (cargo build)"


def test_a_zip_with_settings_is_private_and_the_install_hook_keeps_them_so(tmp_path):
    token = tmp_path / "token"
    token.write_text("sp_secret_token\n")
    out = tmp_path / "a0.zip"
    done = run("zip", out, "--url", "http://172.17.0.1:8765", "--token-file", token)
    assert done.returncode == 0, done.stderr
    assert "sp_secret_token" not in done.stdout + done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert not list(tmp_path.glob(".*partial"))
    settings = json.loads(zip_tree(out)["config.json"])
    assert settings["url"] == "http://172.17.0.1:8765" and settings["token"] == "sp_secret_token"
    assert {"pad", "author", "poll_seconds", "recall_budget_chars"} <= settings.keys()  # every key
    # What Agent Zero's installer does: extract (modes dropped), then the hook.
    with zipfile.ZipFile(out) as z:
        z.extractall(tmp_path / "x")
    config = tmp_path / "x" / "scratchpad" / "config.json"
    os.chmod(config, 0o644)
    spec = importlib.util.spec_from_file_location("hooks", tmp_path / "x" / "scratchpad" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    hooks.install()
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


def test_a_zip_where_none_can_be_written_is_refused_with_the_reason(tmp_path):
    done = run("zip", tmp_path / "missing" / "a.zip")
    assert done.returncode == 2 and "cannot write" in done.stderr and "a.zip" in done.stderr
    token = tmp_path / "t"
    done = run("zip", tmp_path / "b.zip", "--url", "http://172.17.0.1:8765", "--token-file", token)
    assert done.returncode == 2 and "cannot read the token" in done.stderr
    assert not (tmp_path / "b.zip").exists()
    # Without the --url/--token-file pair, clap names what is missing.
    done = run("zip", tmp_path / "c.zip", "--url", "http://172.17.0.1:8765")
    assert done.returncode == 2 and "--token-file" in done.stderr


def test_the_plugin_hub_entry_keeps_the_hubs_rules():
    """clients/agent-zero-hub/scratchpad: what a pull request to the Plugin Hub
    (agent0ai/a0-plugins, plugins/<name>/) adds, within its limits."""
    import struct

    import yaml

    hub = PLUGIN.parent / "agent-zero-hub" / "scratchpad"
    entry = yaml.safe_load((hub / "index.yaml").read_text())
    assert set(entry) <= {"title", "description", "github", "tags", "screenshots"}
    assert 0 < len(entry["title"]) <= 50 and 0 < len(entry["description"]) <= 500
    assert len(entry.get("tags", [])) <= 5 and len(entry.get("screenshots", [])) <= 5
    assert entry["github"].startswith("https://github.com/") and len(entry["github"].split("/")) == 5
    name = yaml.safe_load((PLUGIN / "plugin.yaml").read_text())["name"]
    assert hub.name == name  # the Hub's folder and plugin.yaml's name match
    thumb = (hub / "thumbnail.png").read_bytes()
    assert thumb.startswith(b"\x89PNG\r\n\x1a\n") and len(thumb) <= 20 * 1024
    width, height = struct.unpack(">II", thumb[16:24])
    assert width == height >= 64


def test_the_controls_the_plugin_obeys_are_the_protocols():
    """`meta.control` is one typed value: the engine's `Control`, whose
    TypeScript the UI's protocol.ts is generated from; the plugin, which
    cannot import either, spells the same words."""
    import ast
    import re

    repo = PLUGIN.parents[1]
    generated = (repo / "ui" / "src" / "protocol.ts").read_text()
    declared = re.search(r"export type Control = ([^;]+);", generated)
    assert declared, "protocol.ts declares no Control"
    words = tuple(w.strip().strip('"') for w in declared.group(1).split("|"))
    tree_ = ast.parse((PLUGIN / "helpers" / "watcher.py").read_text())
    obeyed = next(ast.literal_eval(n.value) for n in ast.walk(tree_)
                  if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "CONTROLS" for t in n.targets))
    assert sorted(obeyed) == sorted(words), (obeyed, words)
