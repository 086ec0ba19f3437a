//! Workloads as values: an experiment starts from a workload file (a shipped example or
//! the text its generator writes), parses it into the file's typed form
//! ([`WorkloadSpec`]), changes what it varies through typed fields (duration, tick
//! rate, a task's count, the scheduler's options...), and validates it exactly as
//! `simulate` validates a user's file ([`Workload::from_spec`]). No experiment edits
//! workload text: a change to an example's spelling cannot change an experiment.

use crate::Error;
use schedlab_model::options::{RawOptions, RawValue};
use schedlab_model::spec::{
    BfsSpec, Dur, EevdfSpec, PlatformSpec, SchedulerSpec, SimDur, TaskSpec, TimersSpec,
    WorkloadSpec,
};
use schedlab_model::workload::parse_spec;
use schedlab_model::{ModelError, Ns, Overrides, Policy, SimDuration, Workload};
use schedlab_sim::{simulate, SimOptions, SimResult};
use std::path::{Path, PathBuf};

/// A workload being prepared: the file's typed form and where it came from (named in
/// every error).
#[derive(Debug, Clone)]
pub struct Draft {
    origin: PathBuf,
    /// The workload as its file says, with the experiment's changes.
    pub spec: WorkloadSpec,
}

impl Draft {
    /// Parse a workload file's text; `origin` names it in errors (`examples/x.yaml`).
    pub fn parse(text: &str, origin: &str) -> Result<Draft, Error> {
        let origin = PathBuf::from(origin);
        let spec = parse_spec(text, &origin).map_err(Error::input)?;
        Ok(Draft { origin, spec })
    }

    /// Where the workload came from.
    pub fn origin(&self) -> &Path {
        &self.origin
    }

    /// Simulate for exactly `ns` nanoseconds.
    pub fn with_duration(mut self, ns: Ns) -> Draft {
        self.spec.duration = Some(SimDur(SimDuration::Fixed(ns)));
        self
    }

    /// The tick rate (`platform.hz`).
    pub fn with_hz(mut self, hz: u32) -> Draft {
        self.platform().hz = Some(hz);
        self
    }

    /// `count:` of the task entry named `task` (an error if there is none).
    pub fn with_count(mut self, task: &str, count: u64) -> Result<Draft, Error> {
        self.task(task)?.count = Some(count);
        Ok(self)
    }

    /// The fair class's nice-to-weight table (`scheduler.weights`).
    pub fn with_weights(mut self, table: &str) -> Draft {
        self.scheduler().weights = Some(table.to_string());
        self
    }

    /// `platform:`, created empty if the file has none.
    pub fn platform(&mut self) -> &mut PlatformSpec {
        self.spec.platform.get_or_insert_with(PlatformSpec::default)
    }

    /// `platform.timers:`, created empty if the file has none.
    pub fn timers(&mut self) -> &mut TimersSpec {
        self.platform()
            .timers
            .get_or_insert_with(TimersSpec::default)
    }

    /// `scheduler:`, created empty if the file has none.
    pub fn scheduler(&mut self) -> &mut SchedulerSpec {
        self.spec
            .scheduler
            .get_or_insert_with(SchedulerSpec::default)
    }

    /// Sets `scheduler.<block>.<field>:` as if written in the file (the block is created
    /// if the file has none; the value is checked against the policy's declaration when
    /// the draft is validated, like a user's file).
    pub fn set_option(&mut self, block: &'static str, field: &'static str, value: RawValue) {
        let options = &mut self.scheduler().options;
        let raw = match options.iter().position(|(b, _)| *b == block) {
            Some(i) => &mut options[i].1,
            None => {
                options.push((block, RawOptions::default()));
                &mut options.last_mut().expect("just pushed").1
            }
        };
        raw.0.retain(|(f, _)| *f != field);
        raw.0.push((field, value));
    }

    /// `scheduler.eevdf:`, created empty if the file has none.
    pub fn eevdf(&mut self) -> &mut EevdfSpec {
        self.scheduler()
            .eevdf
            .get_or_insert_with(EevdfSpec::default)
    }

    /// `scheduler.bfs:`, created empty if the file has none.
    pub fn bfs(&mut self) -> &mut BfsSpec {
        self.scheduler().bfs.get_or_insert_with(BfsSpec::default)
    }

    /// The task entry named `name` (before `count:` expands it).
    pub fn task(&mut self, name: &str) -> Result<&mut TaskSpec, Error> {
        let origin = self.origin.display().to_string();
        self.spec
            .tasks
            .iter_mut()
            .find(|t| t.name.as_deref() == Some(name))
            .ok_or_else(|| Error::bug(format!("{origin}: no task `{name}` to change")))
    }

    /// The validated workload, with `ov` applied as the command line's flags would be:
    /// the same checks and messages as `simulate FILE`.
    pub fn workload(&self, ov: &Overrides) -> Result<Workload, Error> {
        Workload::from_spec(self.spec.clone(), ov).map_err(|message| {
            Error::input(ModelError::Invalid {
                path: self.origin.clone(),
                message,
            })
        })
    }

    /// Simulate under `policy` (the policy flag of `simulate`), optionally keeping the
    /// trace.
    pub fn simulate(&self, policy: Policy, trace: bool) -> Result<SimResult, Error> {
        let ov = Overrides {
            policy: Some(policy),
            ..Overrides::default()
        };
        let w = self.workload(&ov)?;
        simulate(&w, &SimOptions { trace })
            .map_err(|e| Error::input(format!("{}: {e}", self.origin.display())))
    }
}

/// A duration field's value.
pub fn dur(ns: Ns) -> Option<Dur> {
    Some(Dur(ns))
}
