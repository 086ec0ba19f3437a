"""Type hints of the Rust core (schedlab._native); see schedlab/__init__.py."""

from typing import List, Optional, Tuple

__version__: str

class SchedlabError(ValueError):
    """A bad workload, argument or simulation: the message is the command line's."""

def simulate(
    source: str,
    is_text: bool,
    label: str,
    policy: Optional[str] = ...,
    placement: Optional[str] = ...,
    cpus: Optional[int] = ...,
    duration: Optional[str] = ...,
    seed: Optional[int] = ...,
    on_miss: Optional[str] = ...,
    jobs: bool = ...,
) -> Tuple[str, Optional[str]]: ...
def analyze(source: str, is_text: bool, label: str, cpus: Optional[int] = ...) -> str: ...
def generate(
    tasks: int,
    utilization: float,
    cpus: int,
    method: str,
    max_task_utilization: float,
    periods: str,
    granularity: str,
    deadlines: str,
    deadline_ratio: float,
    seed: int,
    duration: str,
    policy: Optional[str],
    placement: Optional[str],
    name: str,
    json: bool,
) -> str: ...
def check_cells(cells_json: str) -> None: ...
def run_cells(cells_json: str) -> str: ...
def set_seed(seed: int, utilization: float, sample: int) -> int: ...
def test_names() -> List[str]: ...
