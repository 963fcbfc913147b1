"""Fixtures: a real engine per test module."""

import pytest

from pad_engine import Engine


@pytest.fixture(scope="module")
def engine():
    e = Engine()
    yield e
    e.stop()


@pytest.fixture(scope="module")
def semantic_engine():
    e = Engine(semantic=True)
    yield e
    e.stop()
