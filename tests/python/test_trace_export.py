"""Round trip: simulate -> --trace-out -> parsed with Perfetto's official compiled proto
(and the ftrace text parsed line by line) -> per-CPU busy time, context switches and
per-task CPU time rebuilt from the sched_switch sequence equal schedlab's --json metrics
exactly; deadline-miss instants equal the counted misses."""

import re
from collections import defaultdict

import pytest

perfetto_pb2 = pytest.importorskip(
    "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
    reason="pip install perfetto (ships Perfetto's compiled trace proto)",
)

CASES = [
    ("examples/table1.yaml", ["--policy", "edf"]),
    ("examples/table1.yaml", ["--policy", "illf"]),
    ("examples/table1.yaml", ["--policy", "llf", "--placement", "global"]),
    ("examples/table1.yaml", ["--policy", "rm", "--placement", "partitioned"]),
    ("examples/dhall.yaml", ["--policy", "edf", "--placement", "global"]),
    ("examples/rm-overload.yaml", []),
    ("examples/rm-overload.yaml", ["--on-miss", "abort"]),
    ("examples/sporadic.yaml", ["--policy", "rr"]),
]


class Rebuild:
    """Per-CPU state machine fed with sched_switch events."""

    def __init__(self, cpus, duration, names):
        self.duration = duration
        self.names = names  # pid -> task name
        self.curr = [0] * cpus
        self.since = [0] * cpus
        self.last = [0] * cpus
        self.switches = [0] * cpus
        self.idle_switches = [0] * cpus
        self.busy = [0] * cpus
        self.cpu_time = defaultdict(int)

    def switch(self, cpu, ts, prev_pid, next_pid):
        assert ts >= self.last[cpu], f"cpu {cpu}: time goes back at {ts}"
        self.last[cpu] = ts
        assert prev_pid == self.curr[cpu], f"cpu {cpu} at {ts}: prev {prev_pid} != running {self.curr[cpu]}"
        assert prev_pid != next_pid
        self.switches[cpu] += 1
        if prev_pid == 0 or next_pid == 0:
            self.idle_switches[cpu] += 1
        if prev_pid != 0:
            self.busy[cpu] += ts - self.since[cpu]
            self.cpu_time[self.names[prev_pid]] += ts - self.since[cpu]
        self.curr[cpu] = next_pid
        self.since[cpu] = ts

    def finish(self):
        for cpu, pid in enumerate(self.curr):
            if pid != 0:
                self.busy[cpu] += self.duration - self.since[cpu]
                self.cpu_time[self.names[pid]] += self.duration - self.since[cpu]

    def check(self, res):
        assert sum(self.switches) == res["context_switches"]
        for pc in res["per_cpu"]:
            cpu = pc["cpu"]
            assert self.switches[cpu] == pc["context_switches"], cpu
            assert self.idle_switches[cpu] == pc["idle_switches"], cpu
            # The same IEEE division schedlab does: exact equality.
            assert self.busy[cpu] / self.duration == pc["utilisation"], cpu
        for t in res["tasks"]:
            assert self.cpu_time[t["name"]] == t["cpu_time_ns"], t["name"]


def load_perfetto(path):
    trace = perfetto_pb2.Trace()
    trace.ParseFromString(path.read_bytes())
    return trace


@pytest.mark.parametrize("workload,flags", CASES)
def test_perfetto_round_trip(tmp_path, simulate_json, workload, flags):
    out = tmp_path / "t.pftrace"
    res = simulate_json(workload, *flags, "--trace-out", out)
    trace = load_perfetto(out)

    names = {}
    for p in trace.packet:
        if p.HasField("process_tree"):
            for th in p.process_tree.threads:
                names[th.tid] = th.name
    assert sorted(names.values()) == sorted(t["name"] for t in res["tasks"])

    rb = Rebuild(res["cpus"], res["duration_ns"], names)
    wakeups = defaultdict(int)
    wakeup_new = defaultdict(int)
    tracks = {}
    misses = 0
    miss_counter = []
    for p in trace.packet:
        if p.HasField("ftrace_events"):
            b = p.ftrace_events
            for ev in b.event:
                kind = ev.WhichOneof("event")
                if kind == "sched_switch":
                    s = ev.sched_switch
                    if s.prev_pid == 0:
                        assert s.prev_comm == f"swapper/{b.cpu}"
                    if s.next_pid == 0:
                        assert s.next_comm == f"swapper/{b.cpu}"
                    rb.switch(b.cpu, ev.timestamp, s.prev_pid, s.next_pid)
                elif kind == "sched_wakeup":
                    wakeups[ev.sched_wakeup.pid] += 1
                elif kind == "sched_wakeup_new":
                    wakeup_new[ev.sched_wakeup_new.pid] += 1
                else:
                    pytest.fail(f"unexpected ftrace event {kind}")
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor.name
        if p.HasField("track_event"):
            te = p.track_event
            assert te.track_uuid in tracks, "track event before its descriptor"
            if te.type == perfetto_pb2.TrackEvent.TYPE_INSTANT and te.name.startswith("miss "):
                misses += 1
            if tracks[te.track_uuid] == "deadline misses":
                miss_counter.append(te.counter_value)
    rb.finish()
    rb.check(res)

    # Every task that ran woke up, exactly once as a new task.
    for pid, name in names.items():
        t = next(t for t in res["tasks"] if t["name"] == name)
        if t["cpu_time_ns"] > 0:
            assert wakeup_new[pid] == 1, name
    assert sum(wakeups.values()) + sum(wakeup_new.values()) >= res["jobs_completed"] / 2
    assert misses == res["deadline_misses"]
    assert miss_counter[-1] == res["deadline_misses"]


SWITCH = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d{3})\]\s+(?P<s>\d+)\.(?P<ns>\d{9}): "
    r"(?P<event>sched_\w+):\s+(?P<rest>.*)$"
)
SWITCH_BODY = re.compile(
    r"^(?P<prev>.+):(?P<ppid>\d+) \[-?\d+\] (?P<state>\S+) ==> (?P<next>.+):(?P<npid>\d+) \[-?\d+\]$"
)


@pytest.mark.parametrize("workload,flags", CASES[:3] + CASES[5:6])
def test_ftrace_text_round_trip(tmp_path, simulate_json, workload, flags):
    out = tmp_path / "t.txt"
    res = simulate_json(workload, *flags, "--trace-out", out)
    lines = out.read_text().splitlines()
    assert lines[0] == f"cpus={res['cpus']}"
    names = {}
    events = []
    last = 0
    for line in lines[1:]:
        m = SWITCH.match(line)
        assert m, line
        ts = int(m["s"]) * 1_000_000_000 + int(m["ns"])
        assert ts >= last
        last = ts
        if m["event"] == "sched_switch":
            b = SWITCH_BODY.match(m["rest"])
            assert b, line
            for comm, pid in ((b["prev"], b["ppid"]), (b["next"], b["npid"])):
                if pid != "0":
                    names[int(pid)] = comm
            events.append((int(m["cpu"]), ts, int(b["ppid"]), int(b["npid"])))
        else:
            assert m["event"] in ("sched_wakeup", "sched_wakeup_new"), line
    rb = Rebuild(res["cpus"], res["duration_ns"], names)
    for e in events:
        rb.switch(*e)
    rb.finish()
    rb.check(res)


def test_perfetto_trace_is_deterministic(tmp_path, run):
    a, b = tmp_path / "a.pftrace", tmp_path / "b.pftrace"
    run("simulate", "examples/sporadic.yaml", "--trace-out", a)
    run("simulate", "examples/sporadic.yaml", "--trace-out", b)
    assert a.read_bytes() == b.read_bytes()


def test_unwritable_trace_is_an_output_error(run):
    # Missing directories are created, so the path must be one no one can create: /proc.
    p = run(
        "simulate", "examples/e2.yaml", "--trace-out", "/proc/nonexistent-dir/t.pftrace", check=False
    )
    assert p.returncode == 1
    assert "cannot write /proc/nonexistent-dir/t.pftrace" in p.stderr
    assert p.stdout == ""


@pytest.mark.parametrize("policy", ["cfs", "eevdf", "bfs"])
def test_perfetto_round_trip_with_fair_tasks(tmp_path, run, simulate_json, policy):
    w = tmp_path / "mix.yaml"
    w.write_text(
        "platform: { cpus: 2 }\nduration: 300ms\ntasks:\n"
        "  - { name: rt, runtime: 2ms, period: 10ms }\n"
        "  - { name: web, run: 3ms, sleep: 7ms }\n"
        "  - { name: hog }\n"
        "  - { name: nice-hog, nice: 5 }\n"
    )
    probe = run("simulate", w, "--policy", policy, "--json", check=False)
    if probe.returncode != 0 and "not simulated yet" in probe.stderr:
        pytest.skip(f"{policy}: {probe.stderr.strip()}")
    out = tmp_path / "t.pftrace"
    res = simulate_json(w, "--policy", policy, "--trace-out", out)
    trace = load_perfetto(out)
    names = {th.tid: th.name for p in trace.packet if p.HasField("process_tree") for th in p.process_tree.threads}
    rb = Rebuild(res["cpus"], res["duration_ns"], names)
    for p in trace.packet:
        if p.HasField("ftrace_events"):
            for ev in p.ftrace_events.event:
                if ev.WhichOneof("event") == "sched_switch":
                    s = ev.sched_switch
                    rb.switch(p.ftrace_events.cpu, ev.timestamp, s.prev_pid, s.next_pid)
    rb.finish()
    rb.check(res)
