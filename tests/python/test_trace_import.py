"""`schedlab trace import` on real kernel traces recorded here, and on bad input.

The recording tests need root and tracefs; they record at most ~2 s of a small load:
`sl-periodic` (SCHED_FIFO priority 50, 1 ms of work every 10 ms, absolute wake-ups) and
`sl-hog` (SCHED_OTHER, irregular run/sleep). When tracing is not possible (not root,
no trace-cmd, tracefs locked down) they are skipped with the reason printed."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

LOAD = textwrap.dedent(
    """
    import ctypes, os, random, sys, time
    name, seconds = sys.argv[1], float(sys.argv[2])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, name.encode(), 0, 0, 0)          # PR_SET_NAME: the comm in the trace
    end = time.monotonic() + seconds
    if name == "sl-periodic":
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
        except PermissionError:
            pass
        nxt = time.monotonic()
        while nxt < end:
            t = time.monotonic()
            while time.monotonic() - t < 0.001:      # 1 ms of work
                pass
            nxt += 0.010                             # every 10 ms
            time.sleep(max(0.0, nxt - time.monotonic()))
    else:
        rnd = random.Random(1)
        while time.monotonic() < end:
            t = time.monotonic()
            while time.monotonic() - t < rnd.uniform(0.002, 0.020):
                pass
            time.sleep(rnd.uniform(0.001, 0.030))
    """
)

TRACEFS = Path("/sys/kernel/tracing")


def start_load(tmp_path, seconds):
    script = tmp_path / "load.py"
    script.write_text(LOAD)
    return [
        subprocess.Popen([sys.executable, str(script), name, str(seconds)])
        for name in ("sl-periodic", "sl-hog")
    ]


@pytest.fixture(scope="module")
def tracefs():
    """tracefs at /sys/kernel/tracing for the recording tests. A fresh machine may have
    it unmounted (nothing has looked at it since boot): as root, mount it for this module
    and unmount it afterwards, as `schedlab run --trace-out` does."""
    mounted = False
    if os.geteuid() == 0 and not (TRACEFS / "instances").is_dir() and TRACEFS.is_dir():
        p = subprocess.run(
            ["mount", "-t", "tracefs", "nodev", str(TRACEFS)],
            capture_output=True, text=True, check=False,
        )
        mounted = p.returncode == 0
    yield
    if mounted:
        subprocess.run(["umount", str(TRACEFS)], capture_output=True, check=False)


def need_tracing():
    if os.geteuid() != 0:
        pytest.skip("tracing needs root")
    if not (TRACEFS / "instances").is_dir():
        pytest.skip(f"{TRACEFS} is not mounted (and could not be) or has no instances/")


def record_trace_cmd(tmp_path):
    """trace-cmd record (plain `record` fails here with EPERM on set_ftrace_filter:
    --no-filter -d avoids the function tracer's files)."""
    if not shutil.which("trace-cmd"):
        pytest.skip("trace-cmd is not installed (apt-get install trace-cmd)")
    dat = tmp_path / "t.dat"
    script = tmp_path / "load.py"
    script.write_text(LOAD)
    cmd = [
        "trace-cmd", "record", "--no-filter", "-d",
        "-e", "sched:sched_switch", "-e", "sched:sched_wakeup",
        "-e", "sched:sched_wakeup_new", "-e", "sched:sched_process_exit",
        "-o", str(dat),
        "sh", "-c",
        f"{sys.executable} {script} sl-periodic 2 & {sys.executable} {script} sl-hog 2 & wait",
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    if not dat.exists() or dat.stat().st_size == 0:
        pytest.skip(f"trace-cmd could not record here (exit {p.returncode}): {p.stderr.strip()[-300:]}")
    rep = subprocess.run(
        ["trace-cmd", "report", "-i", str(dat)], capture_output=True, text=True, timeout=60,
        check=False,
    )
    assert rep.returncode == 0, rep.stderr
    txt = tmp_path / "t.txt"
    txt.write_text(rep.stdout)
    return txt


def record_instance(tmp_path):
    """A private tracefs instance: raw ftrace text, no trace-cmd needed."""
    inst = TRACEFS / "instances" / f"schedlab-test-{os.getpid()}"
    try:
        inst.mkdir()
    except OSError as e:
        pytest.skip(f"cannot create a tracefs instance: {e}")
    try:
        for ev in ("sched_switch", "sched_wakeup", "sched_wakeup_new"):
            (inst / "events" / "sched" / ev / "enable").write_text("1")
        (inst / "buffer_size_kb").write_text("8192")
        (inst / "tracing_on").write_text("1")
        procs = start_load(tmp_path, 1.5)
        for p in procs:
            p.wait(timeout=30)
        (inst / "tracing_on").write_text("0")
        txt = tmp_path / "raw.txt"
        txt.write_text((inst / "trace").read_text())
        return txt
    except OSError as e:
        pytest.skip(f"tracefs instance not usable: {e}")
    finally:
        for ev in ("sched_switch", "sched_wakeup", "sched_wakeup_new"):
            try:
                (inst / "events" / "sched" / ev / "enable").write_text("0")
            except OSError:
                pass
        for _ in range(20):
            try:
                inst.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def tasks_of(yaml_text):
    """name -> the task's flow mapping line (the importer writes one line per task)."""
    out = {}
    for line in yaml_text.splitlines():
        line = line.strip()
        if line.startswith("- { name: "):
            name = json.loads(line[len("- { name: "):].split(",")[0].rstrip(" }"))
            out[name] = line
    return out


def check_periodic_task(line):
    assert "class: fifo" in line and "priority: 50" in line, line
    period = line.split("period: ")[1].split(",")[0].rstrip(" }")
    assert period.endswith("ms"), line
    assert abs(float(period[:-2]) - 10.0) < 0.5, f"period {period} is not about 10ms: {line}"


@pytest.mark.parametrize("how", ["trace-cmd", "instance"])
def test_import_a_recorded_trace(tmp_path, run, how, tracefs):
    need_tracing()
    txt = record_trace_cmd(tmp_path) if how == "trace-cmd" else record_instance(tmp_path)
    out = tmp_path / "w.yaml"
    p = run("trace", "import", txt, "-o", out)
    print(p.stderr)  # what could not be recovered, for the log
    text = out.read_text()
    tasks = tasks_of(text)
    assert "sl-periodic" in tasks, f"sl-periodic missing from:\n{text}"
    assert "sl-hog" in tasks, f"sl-hog missing from:\n{text}"
    check_periodic_task(tasks["sl-periodic"])
    assert "class: normal" in tasks["sl-hog"], tasks["sl-hog"]
    assert "imported" in p.stderr

    # The periodic part alone simulates under the real-time policies.
    rt = tmp_path / "rt.yaml"
    run("trace", "import", txt, "--periodic-only", "-o", rt)
    res = json.loads(run("simulate", rt, "--json").stdout)
    names = {t["name"] for t in res["tasks"]}
    assert "sl-periodic" in names
    assert names == set(tasks_of(rt.read_text()))


def test_imported_workload_simulates_under_cfs(tmp_path, run, tracefs):
    need_tracing()
    txt = record_instance(tmp_path)
    out = tmp_path / "w.yaml"
    run("trace", "import", txt, "--min-cpu", "1ms", "-o", out)
    p = run("simulate", out, "--policy", "cfs", "--json", check=False)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert {t["name"] for t in res["tasks"]} == set(tasks_of(out.read_text()))


def test_bad_traces_name_the_line(tmp_path, run):
    good = (
        "cpus=1\n"
        "          <idle>-0     [000]     1.000000: sched_switch:         swapper/0:0 [120] R ==> a:7 [120]\n"
        "               a-7     [000]     1.001000: sched_switch:         a:7 [120] S ==> swapper/0:0 [120]\n"
    )
    cases = [
        ("truncated", good + "               a-7     [000]     1.002000: sched_swi", "line 4: not an ftrace event line"),
        ("body", good + "               a-7     [000]     1.002000: sched_switch: a:7 [120] S ==>\n", "line 4: malformed sched_switch event"),
        ("unknown", good + "               a-7     [000]     1.002000: irq_handler_entry: irq=9 name=acpi\n", "line 4: unknown event `irq_handler_entry`"),
        ("garbage", "\x00\x01binary garbage\n" + good, "line 1: not an ftrace event line"),
        ("empty", "", "no sched_switch event"),
    ]
    for name, text, want in cases:
        f = tmp_path / f"{name}.txt"
        f.write_text(text)
        p = run("trace", "import", f, check=False)
        assert p.returncode == 2, (name, p.stderr)
        assert want in p.stderr, (name, p.stderr)
        assert p.stderr.startswith(f"error: {f}: "), p.stderr
        assert p.stdout == ""
    f = tmp_path / "unknown.txt"
    p = run("trace", "import", f, "--ignore-unknown")
    assert "irq_handler_entry event(s) were skipped" in p.stderr
