"""Type hints of the schedlab package."""

import os
from typing import Any, Dict, Iterable, List, Optional, Union

import pandas as pd

from ._native import SchedlabError as SchedlabError

__version__: str
TESTS: List[str]
Workload = Union[str, os.PathLike[str], Dict[str, Any]]

class SimulationResult:
    data: Dict[str, Any]
    workload: str
    policy: str
    placement: str
    cpus: int
    duration_ns: int
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
    tasks: List[Dict[str, Any]]
    per_cpu: List[Dict[str, Any]]
    def __getattr__(self, name: str) -> Any: ...
    def to_dict(self) -> Dict[str, Any]: ...
    @property
    def tasks_df(self) -> pd.DataFrame: ...
    @property
    def cpus_df(self) -> pd.DataFrame: ...
    @property
    def jobs_df(self) -> Optional[pd.DataFrame]: ...

def simulate(
    workload: Workload,
    policy: Optional[str] = ...,
    placement: Optional[str] = ...,
    *,
    jobs: bool = ...,
    cpus: Optional[int] = ...,
    duration: Union[str, int, None] = ...,
    seed: Optional[int] = ...,
    on_miss: Optional[str] = ...,
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
    duration: Union[str, int] = ...,
    policy: Optional[str] = ...,
    placement: Optional[str] = ...,
    name: str = ...,
    format: str = ...,
) -> Union[Dict[str, Any], str]: ...
def analyze(workload: Workload, cpus: Optional[int] = ...) -> Dict[str, Any]: ...
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
    out: Optional[str] = ...,
    batch_size: Optional[int] = ...,
    progress: Optional[bool] = ...,
) -> pd.DataFrame: ...
