"""Fixtures: the engine helper shared with the Python client's tests."""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "clients" / "python" / "tests"))
