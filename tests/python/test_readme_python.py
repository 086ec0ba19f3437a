"""The README's Python section, as a new user runs it: in this environment, with the
installed package's `schedlab` command (what `pip install .` gives) first on PATH and no
cargo-built binary anywhere on it, from a fresh directory holding a copy of examples/.
The block's `pip install .` is what installed this environment (.ci/test installs the
wheel it built); every other line runs as written."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _blocks(text):
    """(line, code) of every ```sh block, skip markers ignored."""
    return [
        (text[: m.start()].count("\n") + 1, m.group(1))
        for m in re.finditer(r"^```sh\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    ]


def _python_section():
    """The README's blocks from the one that generates out/set.yaml to the one that
    installs the package (its pip line left out)."""
    blocks = _blocks((ROOT / "README.md").read_text())
    gen = next(i for i, (_, c) in enumerate(blocks) if "schedlab generate" in c)
    pip = next(i for i, (_, c) in enumerate(blocks) if c.startswith("pip install ."))
    assert gen < pip
    code = [c for _, c in blocks[gen : pip + 1]]
    code[-1] = "\n".join(
        line for line in code[-1].splitlines() if not line.startswith("pip install")
    )
    return code


def test_the_readme_python_section_runs_with_the_installed_command(tmp_path):
    if not (BIN / "schedlab").is_file():
        pytest.skip(
            f"no schedlab command in {BIN}: the package is not installed here (pip install .)"
        )
    import schedlab

    # The installed package, not the source tree's python/.
    assert ROOT / "python" not in Path(schedlab.__file__).resolve().parents
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDLAB_")}
    env["PATH"] = f"{BIN}{os.pathsep}/usr/bin{os.pathsep}/bin"
    found = subprocess.run(
        ["bash", "-c", "command -v schedlab python3"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert found == [str(BIN / "schedlab"), str(BIN / "python3")]
    outs = []
    for code in _python_section():
        p = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert p.returncode == 0, f"{code}\nexited {p.returncode}:\n{p.stderr[-3000:]}"
        assert "error:" not in p.stderr, p.stderr[-3000:]
        assert "Traceback" not in p.stderr, p.stderr[-3000:]
        outs.append(p.stdout)
    # The python3 line prints LLF's deadline misses on the generated set: a count.
    assert re.search(r"^\d+$", outs[-1], re.MULTILINE), outs[-1]
    figures = sorted(f.name for f in (tmp_path / "out" / "sweep").glob("fig*"))
    assert figures, sorted(p.name for p in (tmp_path / "out").rglob("*"))
