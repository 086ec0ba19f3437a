"""schedlab: a laboratory for Linux CPU scheduling, from Python.

The simulator, the task-set generators and the schedulability tests are schedlab's Rust
core (the same code as the ``schedlab`` command); this package adds pandas results,
sweeps (serial or on a Dask cluster) and plots.

>>> import schedlab
>>> r = schedlab.simulate("examples/dhall.yaml", policy="edf", placement="global")
>>> r.deadline_misses, r.tasks_df[["name", "misses"]]
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Union

import pandas as pd

from . import _native
from ._native import SchedlabError
from .sweep import sweep

__all__ = [
    "TESTS",
    "SchedlabError",
    "SimulationResult",
    "analyze",
    "generate",
    "simulate",
    "sweep",
]

__version__ = _native.__version__

#: Names of the schedulability tests, in the order ``analyze`` reports them.
TESTS = list(_native.test_names())

_OVERRIDES = ("cpus", "duration", "seed", "on_miss")

Workload = Union[str, "os.PathLike[str]", dict[str, Any]]


def _source(workload: Workload):
    """(source, is_text, label) for the native functions."""
    if isinstance(workload, dict):
        return json.dumps(workload), True, "<dict>.json"
    if isinstance(workload, (str, os.PathLike)):
        return os.fspath(workload), False, os.fspath(workload)
    raise TypeError(
        f"workload must be a file path or a dict, not {type(workload).__name__}"
    )


def _duration(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(
            f"duration must be a string with a unit (e.g. '1s') or int ns, not {value!r}"
        )
    return str(value)


class SimulationResult:
    """One simulation's results.

    Every key of ``schedlab simulate --json`` is an attribute (``r.deadline_misses``,
    ``r.context_switches_per_cpu_per_s``, ``r.tasks`` as a list of dicts...), and
    ``r.data`` is the whole object. ``tasks_df``, ``cpus_df`` and ``jobs_df`` are pandas
    DataFrames of the per-task rows, the per-CPU rows and every job (the columns of
    ``--jobs-csv``; None when simulated with ``jobs=False``).
    """

    def __init__(self, data: dict[str, Any], jobs_csv: str | None):
        self.data = data
        self._jobs_csv = jobs_csv

    def __getattr__(self, name: str):
        data = self.__dict__.get("data", {})
        if name in data:
            return data[name]
        raise AttributeError(f"SimulationResult has no field {name!r}")

    def __dir__(self):
        return list(super().__dir__()) + list(self.data)

    def __repr__(self) -> str:
        d = self.data
        return (
            f"SimulationResult(workload={d.get('workload')!r}, policy={d.get('policy')!r}, "
            f"placement={d.get('placement')!r}, cpus={d.get('cpus')}, "
            f"deadline_misses={d.get('deadline_misses')}, "
            f"context_switches_per_cpu_per_s={d.get('context_switches_per_cpu_per_s')})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` object as a dict."""
        return self.data

    @property
    def tasks_df(self) -> pd.DataFrame:
        """One row per task (the ``tasks`` list)."""
        return pd.DataFrame(self.data["tasks"])

    @property
    def cpus_df(self) -> pd.DataFrame:
        """One row per CPU (the ``per_cpu`` list)."""
        return pd.DataFrame(self.data["per_cpu"])

    @property
    def jobs_df(self) -> pd.DataFrame | None:
        """One row per job (task, job, release_ns, start_ns, finish_ns, deadline_ns, cpu,
        response_ns, missed, aborted), or None without ``jobs=True``."""
        if self._jobs_csv is None:
            return None
        return pd.read_csv(io.StringIO(self._jobs_csv))


def simulate(
    workload: Workload,
    policy: str | None = None,
    placement: str | None = None,
    *,
    jobs: bool = True,
    **overrides: Any,
) -> SimulationResult:
    """Simulate a workload, as ``schedlab simulate FILE --json`` does.

    Args:
        workload: a workload file's path (YAML or JSON), or the workload as a dict (the
            file format's keys).
        policy: policy for the periodic tasks (``edf``, ``llf``, ``illf``, ``rm``...);
            default the workload's.
        placement: ``global``, ``partitioned`` or ``linux``; default the workload's.
        jobs: also record every job (``jobs_df``); False is faster for long runs.
        **overrides: ``cpus``, ``duration`` (``"10s"``, int ns, ``"hyperperiod"`` or
            ``"hyperperiod<=20s"``), ``seed``, ``on_miss`` (``continue``/``abort``), as
            the command line's flags.

    Returns:
        A :class:`SimulationResult`.

    Raises:
        SchedlabError: a bad workload or value, with the command line's message.
        TypeError: an unknown override.
    """
    unknown = sorted(set(overrides) - set(_OVERRIDES))
    if unknown:
        raise TypeError(
            f"unknown override {unknown[0]!r} (known: {', '.join(_OVERRIDES)})"
        )
    source, is_text, label = _source(workload)
    text, csv = _native.simulate(
        source,
        is_text,
        label,
        policy=policy,
        placement=placement,
        cpus=overrides.get("cpus"),
        duration=_duration(overrides.get("duration")),
        seed=overrides.get("seed"),
        on_miss=overrides.get("on_miss"),
        jobs=jobs,
    )
    return SimulationResult(json.loads(text), csv)


def generate(
    tasks: int = 16,
    utilization: float = 2.0,
    cpus: int = 4,
    *,
    method: str = "uunifast-discard",
    max_task_utilization: float = 1.0,
    periods: str = "10ms..1000ms",
    granularity: str = "1ms",
    deadlines: str = "implicit",
    deadline_ratio: float = 0.0,
    seed: int = 1,
    duration: str | int = "1s",
    policy: str | None = None,
    placement: str | None = None,
    name: str = "generated",
    format: str = "dict",
) -> dict[str, Any] | str:
    """A random periodic task set, as ``schedlab generate`` writes it.

    Args:
        tasks, utilization, cpus: number of tasks, their total utilisation, CPUs.
        method: ``uunifast``, ``uunifast-discard``, ``randfixedsum`` or ``cfs``.
        max_task_utilization: bound on each task's utilisation.
        periods: ``"MIN..MAX"`` (log-uniform, multiples of ``granularity``) or a list
            ``"10ms,20ms,40ms"`` drawn uniformly.
        deadlines: ``implicit`` or ``constrained`` (uniform in [C + r(T − C), T]).
        seed: the same seed gives the same set.
        format: ``"dict"`` (for :func:`simulate`), ``"yaml"`` or ``"json"`` text.

    Raises:
        SchedlabError: e.g. a negative utilisation or more than ``tasks`` × bound.
    """
    if format not in ("dict", "yaml", "json"):
        raise ValueError(f"format must be 'dict', 'yaml' or 'json', not {format!r}")
    text = _native.generate(
        tasks,
        float(utilization),
        cpus,
        method,
        float(max_task_utilization),
        periods,
        granularity,
        deadlines,
        float(deadline_ratio),
        seed,
        _duration(duration),
        policy,
        placement,
        name,
        format != "yaml",
    )
    return json.loads(text) if format == "dict" else text


def analyze(workload: Workload, cpus: int | None = None) -> dict[str, Any]:
    """Every schedulability test on a workload's periodic tasks.

    Returns the ``schedlab analyze --json`` object: ``workload``, ``cpus``, ``tasks``,
    ``utilization``, ``density`` and ``tests``, a list of ``{test, title, exact,
    outcome, why}`` where outcome is ``schedulable``, ``unschedulable``, ``not-proven``
    or ``not-applicable``.
    """
    source, is_text, label = _source(workload)
    return json.loads(_native.analyze(source, is_text, label, cpus=cpus))

