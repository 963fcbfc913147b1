"""Fixtures: a real engine per test module (shared with the Python client's tests)."""

import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "clients" / "python" / "tests"))

from pad_engine import Engine  # noqa: E402


@pytest.fixture(scope="module")
def engine():
    e = Engine()
    yield e
    e.stop()
