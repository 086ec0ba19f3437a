"""Shared fixtures of schedlab's Python tests: the `schedlab` binary and a runner.

The binary is $SCHEDLAB_BIN if set (.ci/test sets it to the one `cargo test` just
built), else debug/schedlab in the cargo target directory ($CARGO_TARGET_DIR or
target/), built here with cargo if missing; without cargo, the `schedlab` command of
the installed package (`pip install .`) on PATH.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def schedlab() -> Path:
    env = os.environ.get("SCHEDLAB_BIN")
    if env:
        return Path(env)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    binary = target / "debug" / "schedlab"
    if binary.exists():
        return binary
    if shutil.which("cargo"):
        subprocess.run(
            ["cargo", "build", "-q", "-p", "schedlab-cli"], cwd=ROOT, check=True
        )
        return binary
    installed = shutil.which("schedlab")
    if installed is None:
        pytest.fail(
            "no schedlab binary: set SCHEDLAB_BIN, install Rust (cargo builds it) "
            "or pip install . (its schedlab command)"
        )
    return Path(installed)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture()
def run(schedlab):
    """Run `schedlab ARGS...`; return the CompletedProcess (text mode)."""

    def _run(*args, check=True):
        p = subprocess.run(
            [str(schedlab), *map(str, args)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check and p.returncode != 0:
            raise AssertionError(
                f"schedlab {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}"
            )
        return p

    return _run


@pytest.fixture()
def simulate_json(run):
    """Run `schedlab simulate ... --json` and return the parsed object."""

    def _sim(*args):
        return json.loads(run("simulate", *args, "--json").stdout)

    return _sim
