"""Agent Zero's plugin hooks (`helpers/plugins.py` `call_plugin_hook`).

`install` runs once Agent Zero's own installer (Plugins → Install: a ZIP, a
Git URL, the Plugin Hub) has put the plugin in `usr/plugins/scratchpad/`.
A ZIP written by `pad agent-zero zip --url … --token-file …` carries the
settings with the engine's access token, and Python's `zipfile` extracts
every file with the default mode: the settings are made private again."""

import os
import pathlib


def install():
    config = pathlib.Path(__file__).resolve().parent / "config.json"
    if config.is_file() and not config.is_symlink():
        os.chmod(config, 0o600)
