"""Type hints of the schedlab package."""

import os
from collections.abc import Iterable
from typing import Any, TypeAlias

import pandas as pd

from ._native import SchedlabError as SchedlabError
from .experiments import EXPERIMENTS as EXPERIMENTS
from .experiments import Reproduction as Reproduction
from .experiments import reproduce as reproduce

__version__: str
TESTS: list[str]
Workload: TypeAlias = str | os.PathLike[str] | dict[str, Any]

class SimulationResult:
    data: dict[str, Any]
    workload: str
    policy: str
    placement: str
    cpus: int
    duration_ns: int
    hyperperiod_ns: int | None
    feasibility_interval_ns: int | None
    horizon_complete: bool
    partition: dict[str, Any] | None
    events: int
    wall_s: float
    jobs_released: int
    jobs_completed: int
    jobs_aborted: int
    deadline_misses: int
    context_switches: int
    context_switches_per_cpu_per_s: float
    task_switches_per_cpu_per_s: float
    preemptions: int
    migrations: int
    laxity_evaluations: int
    throttles: int
    tasks: list[dict[str, Any]]
    per_cpu: list[dict[str, Any]]
    schedlab_version: str
    seed: int
    options: dict[str, Any]
    def __getattr__(self, name: str) -> Any: ...
    def to_dict(self) -> dict[str, Any]: ...
    @property
    def tasks_df(self) -> pd.DataFrame: ...
    @property
    def cpus_df(self) -> pd.DataFrame: ...
    @property
    def jobs_df(self) -> pd.DataFrame | None: ...

def simulate(
    workload: Workload,
    policy: str | None = ...,
    placement: str | None = ...,
    *,
    jobs: bool = ...,
    cpus: int | None = ...,
    duration: str | int | None = ...,
    seed: int | None = ...,
    on_miss: str | None = ...,
) -> SimulationResult: ...
def generate(
    tasks: int = ...,
    utilization: float = ...,
    cpus: int = ...,
    *,
    method: str = ...,
    max_task_utilization: float = ...,
    periods: str = ...,
    granularity: str = ...,
    deadlines: str = ...,
    deadline_ratio: float = ...,
    seed: int = ...,
    duration: str | int = ...,
    policy: str | None = ...,
    placement: str | None = ...,
    name: str = ...,
    format: str = ...,
) -> dict[str, Any] | str: ...
def analyze(workload: Workload, cpus: int | None = ...) -> dict[str, Any]: ...
def sweep(
    cpus: int = ...,
    tasks: int = ...,
    utilizations: Iterable[float] = ...,
    policies: Iterable[str] = ...,
    samples: int = ...,
    seed: int = ...,
    duration: str = ...,
    client: Any = ...,
    *,
    method: str = ...,
    periods: str = ...,
    granularity: str = ...,
    analysis: bool = ...,
    out: str | None = ...,
    batch_size: int | None = ...,
    progress: bool | None = ...,
) -> pd.DataFrame: ...
