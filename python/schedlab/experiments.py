"""The seed papers' experiments from Python: ``schedlab.reproduce("illf")``.

The experiments are the Rust core's (the ``schedlab-experiments`` crate, the same code as
``schedlab reproduce``); this module hands their report out as DataFrames. The report is
the command line's ``--json`` output, key for key (figures are listed by file name, not
drawn: ``schedlab reproduce`` writes them).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pandas as pd

from . import _native

#: Names of the experiments, in the order ``"all"`` runs them.
EXPERIMENTS = list(_native.experiment_names())

_CASE_COLUMNS = ["case", "paper", "simulated", "real", "expected", "note", "sched_ext_guest"]


class Reproduction:
    """One experiment's (or ``"all"``'s) report.

    ``cases``: one row per case (``case``, ``paper``, ``simulated``, ``real``,
    ``expected``, ``note``, ``sched_ext_guest``; the numbers as dicts, None where the
    JSON has null or no value). ``headlines``: one row per headline (``headline``,
    ``paper``, ``verdict``). ``sensitivity``: one row per sensitivity row of every
    headline (``headline``, ``choice``, ``setting``, ``holds``, ``values`` as a dict).
    ``claims``: ``claim``, ``verdict``, ``why``. ``not_modelled``: ``step``, ``why``.
    ``assumptions`` and ``plots`` are lists; ``to_dict()`` is the command line's JSON.
    """

    def __init__(self, data: dict[str, Any]):
        self._data = data
        self.experiment: str = data["experiment"]
        self.cases = pd.DataFrame(
            [{k: c.get(k) for k in _CASE_COLUMNS} for c in data["cases"]],
            columns=_CASE_COLUMNS,
        )
        self.headlines = pd.DataFrame(
            [
                {"headline": h["headline"], "paper": h["paper"], "verdict": h["verdict"]}
                for h in data["headlines"]
            ],
            columns=["headline", "paper", "verdict"],
        )
        self.sensitivity = pd.DataFrame(
            [
                {"headline": h["headline"], **row}
                for h in data["headlines"]
                for row in h["sensitivity"]
            ],
            columns=["headline", "choice", "setting", "values", "holds"],
        )
        self.claims = pd.DataFrame(data["claims"], columns=["claim", "verdict", "why"])
        self.not_modelled = pd.DataFrame(data["not_modelled"], columns=["step", "why"])
        self.assumptions: list[str] = list(data["assumptions"])
        self.plots: list[str] = list(data["plots"])

    def to_dict(self) -> dict[str, Any]:
        """The report as ``schedlab reproduce --json`` prints it."""
        return json.loads(json.dumps(self._data))

    def __repr__(self) -> str:
        return (
            f"<Reproduction {self.experiment}: {len(self.cases)} cases, "
            f"{len(self.headlines)} headlines, {len(self.claims)} claims>"
        )


def reproduce(
    experiment: str,
    real: bool = False,
    guest_results: str | os.PathLike[str] | None = None,
) -> Reproduction:
    """Run a seed's experiment (or ``"all"``) and return its report.

    ``real=True`` also measures this machine where an experiment can (as root, as
    ``schedlab reproduce`` without ``--no-real``); by default nothing runs for real and
    the real columns are None (fidelity's are the recorded ones). ``guest_results``: the
    sched_ext guest lane's results file for the ``sched_ext_guest`` column of
    ``cfs-weights`` and ``bfs`` (default: the last lane run's, if any).
    """
    if not isinstance(experiment, str):
        raise TypeError(f"experiment must be a str, not {type(experiment).__name__}")
    if not isinstance(real, bool):
        raise TypeError(f"real must be a bool, not {type(real).__name__}")
    path = None if guest_results is None else os.fspath(guest_results)
    text = _native.reproduce(experiment, real, path)
    return Reproduction(json.loads(text))
