"""Stand-in for Agent Zero's helpers/plugins.py: the plugin's saved
config.json when there is one, else its default_config.yaml — whole, not
merged, as Agent Zero reads it; every plugin in usr/plugins is enabled."""

import json
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def get_plugin_config(plugin_name, agent=None, project_name=None, agent_profile=None):
    base = os.path.join(ROOT, "usr", "plugins", plugin_name)
    saved = os.path.join(base, "config.json")
    if os.path.exists(saved):
        with open(saved, encoding="utf-8") as f:
            return json.load(f)
    default = os.path.join(base, "default_config.yaml")
    if not os.path.exists(default):
        return None
    with open(default, encoding="utf-8") as f:
        return yaml.safe_load(f)


def get_enabled_plugins(agent=None):
    return sorted(os.listdir(os.path.join(ROOT, "usr", "plugins")))
