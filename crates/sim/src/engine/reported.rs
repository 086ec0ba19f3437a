//! What the result reports beyond the metrics: the scheduling decisions the engine took
//! (`scheduler_invocations`, counted where they are taken: one line each in
//! `schedule_local`, `schedule_global` and `schedule_global_fast`) and what the policy
//! built from the task set (`scheduler_structure`, [`SchedClass::report`]).

use super::*;

impl Engine {
    /// Ask the classes that have tasks, in class order (dl, rt, fair), for their report;
    /// the first one given is the result's. Called once, after the first instant's
    /// decisions (the plans of U-EDF and DP-Wrap are then laid out for the first jobs).
    pub(super) fn record_structure(&mut self) {
        let ctx = ctx!(self);
        let report = ClassId::ALL
            .iter()
            .filter(|&&c| self.class_has_tasks[c as usize])
            .find_map(|&c| self.classes[c as usize].report(&ctx, &self.names));
        self.structure = Some(report);
    }
}
