"""`schedlab report` opened in headless Chromium: the rendered DOM has what the page
promises (one Gantt row per CPU and one task table per policy, the metrics table, the
plots, the script ran), and a screenshot is kept under the cargo target directory
(target/test-artifacts/report-*.png) for a person to look at."""

import os
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def artifacts_dir(root):
    target = Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
    if not target.is_absolute():
        target = root / target
    d = target / "test-artifacts"
    d.mkdir(parents=True, exist_ok=True)
    return d


def need_chromium():
    if CHROMIUM:
        return
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is missing (.ci/run installs Debian's chromium package)")
    pytest.skip("chromium not installed (apt-get install chromium)")


def chromium(*args):
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--hide-scrollbars", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


class Dom(HTMLParser):
    """Collects elements with their attributes and parent chain."""

    def __init__(self):
        super().__init__()
        self.stack = []
        self.elements = []  # (tag, attrs dict, ancestors list of (tag, attrs))

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a, list(self.stack)))
        if tag not in ("meta", "br", "img", "input", "link", "line", "rect", "path", "polyline"):
            self.stack.append((tag, a))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), list(self.stack)))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def find(self, tag, cls=None, within=None):
        out = []
        for t, a, anc in self.elements:
            if t != tag or (cls and cls not in a.get("class", "").split()):
                continue
            if within and not any(within(x) for x in anc):
                continue
            out.append((t, a, anc))
        return out


def policy_of(anc):
    for t, a in anc:
        if t == "section" and "policy" in a.get("class", ""):
            return a.get("data-policy")
    return None


def render(run, root, name, workload, *flags):
    need_chromium()
    out = artifacts_dir(root) / f"report-{name}.html"
    run("report", workload, *flags, "-o", out)
    dom = chromium("--virtual-time-budget=2000", "--dump-dom", out.as_uri())
    assert dom.returncode == 0, dom.stderr
    shot = out.with_suffix(".png")
    shot.unlink(missing_ok=True)
    s = chromium(f"--screenshot={shot}", "--window-size=1280,3000", out.as_uri())
    assert s.returncode == 0, s.stderr
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1280, 3000)
    assert len(png) > 50_000, "the screenshot looks empty"
    d = Dom()
    d.feed(dom.stdout)
    return out, d, dom.stdout


def test_report_renders_in_chromium(run, root):
    policies = ["edf", "llf", "illf"]
    _, d, text = render(
        run, root, "table1", "examples/table1.yaml",
        "--policies", ",".join(policies), "--window", "0ms..300ms",
    )
    html = next(a for t, a, _ in d.elements if t == "html")
    assert html.get("data-ready") == "1", "the page's script did not run to its end"
    sections = d.find("section", "policy")
    assert [a["data-policy"] for _, a, _ in sections] == policies
    for p in policies:
        rows = [a for _, a, anc in d.find("g", "gantt-row") if policy_of(anc) == p]
        assert [r["data-cpu"] for r in rows] == ["0", "1", "2", "3"], p
        tables = [a for _, a, anc in d.find("table", "tasks") if policy_of(anc) == p]
        assert len(tables) == 1, p
        runs = [a for _, a, anc in d.find("rect", "run") if policy_of(anc) == p]
        assert runs, p
    assert len(d.find("table", "metrics")) == 1
    heads = [a for t, a, anc in d.elements if t == "th" and any(x[0] == "table" and "metrics" in x[1].get("class", "") for x in anc)]
    assert len(heads) == 1 + len(policies)
    assert len(d.find("svg", "chart")) >= 6
    # One row per task in each task table: 12 tasks.
    assert text.count('<td><span class="swatch"') >= 3 * 12
    assert "http://" not in text and "https://" not in text


def test_report_marks_missed_deadlines(run, root):
    _, d, _ = render(
        run, root, "dhall", "examples/dhall.yaml",
        "--policies", "edf,llf", "--placement", "global", "--window", "0ms..1000ms",
    )
    misses = [policy_of(anc) for _, _, anc in d.find("g", "miss")]
    assert "edf" in misses, "global EDF misses in Dhall's example"
    assert "llf" not in misses
    for p in ("edf", "llf"):
        rows = [a for _, a, anc in d.find("g", "gantt-row") if policy_of(anc) == p]
        assert len(rows) == 4
