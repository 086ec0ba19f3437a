"""schedlab: a laboratory for Linux CPU scheduling, from Python.

The simulator, the task-set generators and the schedulability tests are schedlab's Rust
core (the same code as the ``schedlab`` command); this package adds pandas results,
sweeps (serial or on a Dask cluster) and plots.

>>> import schedlab
>>> r = schedlab.simulate("examples/dhall.yaml", policy="edf", placement="global")
>>> r.deadline_misses, r.tasks_df[["name", "misses"]]
"""

from __future__ import annotations

import functools
import io
import json
import numbers
import os
from typing import Any, Union

import pandas as pd

from . import _native
from . import sweep as _sweep_module
from ._native import SchedlabError
from .experiments import EXPERIMENTS, Reproduction, reproduce

__all__ = [
    "EXPERIMENTS",
    "TESTS",
    "Reproduction",
    "SchedlabError",
    "SimulationResult",
    "analyze",
    "generate",
    "reproduce",
    "simulate",
    "sweep",
]

__version__ = _native.__version__

#: Names of the schedulability tests, in the order ``analyze`` reports them.
TESTS = list(_native.test_names())

_OVERRIDES = ("cpus", "duration", "seed", "on_miss")

Workload = Union[str, "os.PathLike[str]", dict[str, Any]]


#: Largest value of the core's unsigned integers (u64, usize).
_U64_MAX = 2**64 - 1


def _type_name(value) -> str:
    return type(value).__name__


def _show(value) -> str:
    """``repr(value)``, cut to 40 characters (a 400-digit int stays readable)."""
    r = repr(value)
    return r if len(r) <= 40 else r[:37] + "..."


def _int(name: str, value, *, optional: bool = False) -> int | None:
    """An int argument for the core: TypeError for another type (bool included),
    SchedlabError outside 0 ..= 2^64 - 1 (instead of OverflowError)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an int, not {_type_name(value)} ({_show(value)})"
        )
    value = int(value)
    if not 0 <= value <= _U64_MAX:
        raise SchedlabError(f"{name}: {_show(value)} is out of range (0 to 2^64 - 1)")
    return value


def _float(name: str, value) -> float:
    """A real-number argument: TypeError for a string, a bool or anything not a number,
    SchedlabError for a number too large for a float (instead of OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a number, not {_type_name(value)} ({_show(value)})"
        )
    try:
        return float(value)
    except OverflowError:
        raise SchedlabError(
            f"{name}: {_show(value)} is too large for a float"
        ) from None


def _str(name: str, value, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a str, not {_type_name(value)} ({_show(value)})"
        )
    return value


def _bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {_show(value)}")
    return value


def _source(workload: Workload):
    """(source, is_text, label) for the native functions."""
    if isinstance(workload, dict):
        try:
            text = json.dumps(workload, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise TypeError(f"workload: the dict is not plain JSON data: {e}") from None
        return text, True, "<dict>.json"
    if isinstance(workload, (str, os.PathLike)):
        path = os.fspath(workload)
        if isinstance(path, bytes):
            raise TypeError("workload: give the path as str, not bytes")
        if "\0" in path:
            raise SchedlabError(f"workload: the path {path!r} holds a NUL character")
        return path, False, path
    raise TypeError(
        f"workload must be a file path or a dict, not {_type_name(workload)}"
    )


def _duration(value, name: str = "duration") -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, str)):
        raise TypeError(
            f"{name} must be a string with a unit (e.g. '1s') or int ns, not {value!r}"
        )
    if isinstance(value, numbers.Integral):
        _int(name, value)
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
        policy=_str("policy", policy, optional=True),
        placement=_str("placement", placement, optional=True),
        cpus=_int("cpus", overrides.get("cpus"), optional=True),
        duration=_duration(overrides.get("duration")),
        seed=_int("seed", overrides.get("seed"), optional=True),
        on_miss=_str("on_miss", overrides.get("on_miss"), optional=True),
        jobs=_bool("jobs", jobs),
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
        method: ``uunifast``, ``uunifast-discard``, ``randfixedsum`` or ``tilted``
            (exactly uniform with per-task bounds; ``cfs`` is an alias).
        max_task_utilization: bound on each task's utilisation (at most 1).
        periods: ``"MIN..MAX"`` (log-uniform, multiples of ``granularity``), a list
            ``"10ms,20ms,40ms"`` drawn uniformly, or ``"divisors:H[:MIN..MAX]"``
            (divisors of H, so that the hyperperiod divides H).
        deadlines: ``implicit`` or ``constrained`` (uniform in [C + r(T − C), T]).
        seed: the same seed gives the same set.
        format: ``"dict"`` (for :func:`simulate`), ``"yaml"`` or ``"json"`` text.

    Raises:
        SchedlabError: e.g. a negative utilisation or more than ``tasks`` × bound.
    """
    if format not in ("dict", "yaml", "json"):
        raise ValueError(f"format must be 'dict', 'yaml' or 'json', not {format!r}")
    text = _native.generate(
        _int("tasks", tasks),
        _float("utilization", utilization),
        _int("cpus", cpus),
        _str("method", method),
        _float("max_task_utilization", max_task_utilization),
        _str("periods", periods),
        _str("granularity", granularity),
        _str("deadlines", deadlines),
        _float("deadline_ratio", deadline_ratio),
        _int("seed", seed),
        _duration(duration),
        _str("policy", policy, optional=True),
        _str("placement", placement, optional=True),
        _str("name", name),
        format != "yaml",
    )
    return json.loads(text) if format == "dict" else text


def analyze(workload: Workload, cpus: int | None = None) -> dict[str, Any]:
    """Every schedulability test on a workload's periodic tasks.

    Returns the ``schedlab analyze --json`` object: ``workload``, ``cpus``, ``tasks``,
    ``utilization``, ``density`` and ``tests``, a list of ``{test, title, exact,
    outcome, why}`` where outcome is ``schedulable``, ``unschedulable``, ``not-proven``
    or ``not-applicable``; and ``schedlab_version``, ``seed``, ``options``.

    The tests run with the GIL released; Ctrl-C raises ``KeyboardInterrupt`` within
    50 ms (the interrupted test finishes in the background, its result dropped).
    """
    source, is_text, label = _source(workload)
    return json.loads(
        _native.analyze(source, is_text, label, cpus=_int("cpus", cpus, optional=True))
    )


def _client(value):
    """None, a str (``serial``, ``local``, a scheduler address) or a Dask client."""
    if value is None or isinstance(value, str):
        return value
    if all(hasattr(value, a) for a in ("submit", "scheduler_info")):
        return value
    raise TypeError(
        "client must be None, 'serial', 'local', a Dask scheduler address or a "
        f"dask.distributed.Client, not {_type_name(value)} ({_show(value)})"
    )


@functools.wraps(_sweep_module.sweep)
def sweep(*args: Any, **kwargs: Any) -> pd.DataFrame:
    # The grid's rules (types, ranges, limits, axes) live in one place, the sweep
    # module's normalize_grid, shared with `schedlab sweep`; here only OS errors on
    # ``out`` (a file where the directory should be, a missing parent...) become
    # SchedlabError naming the path.
    out = kwargs.get("out")
    if out is not None and not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a directory path, not {_type_name(out)}")
    if out is not None:
        kwargs["out"] = os.fspath(out)
    if "client" in kwargs:
        kwargs["client"] = _client(kwargs["client"])
    try:
        return _sweep_module.sweep(*args, **kwargs)
    except OSError as e:
        if isinstance(e, (ConnectionError, TimeoutError)):
            raise
        what = f"{e.filename}: {e.strerror}" if e.filename is not None else str(e)
        prefix = f"out {kwargs['out']}: " if out is not None else ""
        raise SchedlabError(prefix + what) from e
