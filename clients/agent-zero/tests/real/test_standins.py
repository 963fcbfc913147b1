"""The stand-ins CI runs the plugin against (tests/standins) have the real
Agent Zero's constructors, fields and function parameters."""

import dataclasses
import importlib.util
import inspect
import pathlib

import pytest

STANDINS = pathlib.Path(__file__).resolve().parents[1] / "standins"


def standin(name):
    path = STANDINS / (name.replace(".", "/") + ".py")
    spec = importlib.util.spec_from_file_location(f"standin_{name.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def params(f):
    return [p.name for p in inspect.signature(inspect.unwrap(f)).parameters.values()]


@pytest.mark.parametrize("module, name", [
    ("agent", "AgentContext.__init__"), ("agent", "Agent.__init__"), ("agent", "LoopData.__init__"),
    ("agent", "AgentContext.communicate"), ("agent", "Agent.get_data"), ("agent", "Agent.set_data"),
    ("agent", "Agent.hist_add_tool_result"),
    ("helpers.tool", "Tool.__init__"), ("helpers.extension", "Extension.__init__"),
    ("helpers.plugins", "get_plugin_config"), ("helpers.plugins", "get_enabled_plugins"),
    ("initialize", "initialize_agent"),
    ("helpers.print_style", "PrintStyle.info"), ("helpers.print_style", "PrintStyle.error"),
])
def test_functions_take_the_real_parameters(a0, module, name):
    import importlib

    real, mine = importlib.import_module(module), standin(module)
    for part in name.split("."):
        real, mine = getattr(real, part), getattr(mine, part)
    assert params(mine) == params(real)


@pytest.mark.parametrize("module, name", [
    ("agent", "UserMessage"), ("agent", "AgentConfig"), ("helpers.tool", "Response"),
])
def test_dataclasses_have_the_real_fields(a0, module, name):
    import importlib

    real, mine = getattr(importlib.import_module(module), name), getattr(standin(module), name)
    assert [f.name for f in dataclasses.fields(mine)] == [f.name for f in dataclasses.fields(real)]


def test_loop_data_and_errors_have_what_the_plugin_uses(a0):
    from agent import LoopData
    from helpers import errors

    real, mine = vars(LoopData()), vars(standin("agent").LoopData())
    assert sorted(mine) == sorted(real)
    for name in ("HandledException", "InterventionException", "RepairableException"):
        assert issubclass(getattr(errors, name), Exception)
