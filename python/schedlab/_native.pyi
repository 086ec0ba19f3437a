"""Type hints of the Rust core (schedlab._native); see schedlab/__init__.py."""

__version__: str

class SchedlabError(ValueError):
    """A bad workload, argument or simulation: the message is the command line's."""

def simulate(
    source: str,
    is_text: bool,
    label: str,
    policy: str | None = ...,
    placement: str | None = ...,
    cpus: int | None = ...,
    duration: str | None = ...,
    seed: int | None = ...,
    on_miss: str | None = ...,
    jobs: bool = ...,
) -> tuple[str, str | None]: ...
def analyze(source: str, is_text: bool, label: str, cpus: int | None = ...) -> str: ...
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
    policy: str | None,
    placement: str | None,
    name: str,
    json: bool,
) -> str: ...
def check_cells(cells_json: str) -> None: ...
def run_cells(cells_json: str) -> str: ...
def run_cells_columns(cells_json: str) -> dict[str, list]: ...
def set_seed(seed: int, utilization: float, sample: int) -> int: ...
def test_names() -> list[str]: ...
def _raise_panic(message: str) -> None: ...
def cli_main(argv: list[str]) -> int: ...
