#!/usr/bin/env python3
"""The SimSo cross-check of `ekg` with SimSo's EKG aligned to the paper's window order.

SimSo 0.8.5's EKG swaps each CPU's two split pieces at every slot (Modified_EDF.conf in
simso/schedulers/EKG.py: the task split between p and p + 1 runs at the start on p and
at the end on p + 1 in every other slot); schedlab's `ekg`, as Andersson & Tovar's
paper, always runs it at the end on p and at the start on p + 1. This runs
scripts/simso_crosscheck.py (same arguments, e.g. `--schedlab BIN --policies ekg
--verbose`) with that swap switched off, to see which differences remain
(docs/simso.md, "EKG"). Needs a Python with simso 0.8.5 and simpy 2.3.1.
"""

import os
import sys
from contextlib import contextmanager
from math import ceil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simso_crosscheck as cc


@contextmanager
def simso_no_swap(on=True):
    """SimSo's Modified_EDF.conf without its swap of migrating_task1 and 2 (the rest of
    the method as released: the start piece ceil(L * rate), the end piece from
    int(L * (1 - rate)))."""
    if not on:
        yield
        return
    from simso.core import Timer
    from simso.schedulers import EKG as ekg_mod

    edf = ekg_mod.Modified_EDF
    saved = edf.conf

    def conf(self, next_deadline):
        if next_deadline > self.next_deadline:
            self.next_deadline = next_deadline
            if self.migrating_task1:
                time_a = ceil((next_deadline - self.sim.now()) * self.migrating_task1[1])
                self.timer_a = Timer(self.sim, edf.on_end_migrating1, (self,), time_a,
                                     cpu=self.processors[0], in_ms=False)
                self.timer_a.start()
            self.migrating_job2 = None
            if self.migrating_task2:
                time_b = int((next_deadline - self.sim.now()) * (1 - self.migrating_task2[1]))
                self.timer_b = Timer(self.sim, edf.on_start_migrating2, (self,), time_b,
                                     cpu=self.processors[0], in_ms=False)
                self.timer_b.start()
                self.processors[0].resched()
        if self.migrating_task1:
            self.migrating_job1 = self.migrating_task1[0].job
            self.processors[0].resched()
        else:
            self.migrating_job1 = None

    edf.conf = conf
    try:
        yield
    finally:
        edf.conf = saved


if __name__ == "__main__":
    cc.SIMSO_ALIGN["no-swap"] = simso_no_swap
    cc.POLICIES["ekg"]["simso_align"] = ["no-swap"]
    sys.exit(cc.main(sys.argv[1:]))
