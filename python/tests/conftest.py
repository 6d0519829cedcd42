"""Shared fixtures: where the real data lives, and the built zepp program."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("ZEPP_SHARED_DIR", REPO.parent / "shared"))


@pytest.fixture
def shared_dir():
    """The shared data folder; skips the test, saying why, when it is absent -- and fails it in CI
    (CI=true), where a missing folder is a broken setup, not a reason to pass."""
    if not (SHARED / "data").is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: the shared data folder {SHARED}/data is required")
        pytest.skip(f"shared data folder {SHARED}/data is absent (set ZEPP_SHARED_DIR)")
    return SHARED


def program():
    """The built zepp program (ctest sets ZEPP_BINARY); skips the test, saying why, without it."""
    path = pathlib.Path(os.environ.get("ZEPP_BINARY", ""))
    if not path.is_file():
        pytest.skip("the zepp program is not built (ctest sets ZEPP_BINARY)")
    return path
