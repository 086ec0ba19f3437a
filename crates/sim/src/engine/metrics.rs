//! Results: misses of unfinished jobs, entitled fair shares, per-task, per-CPU and fairness figures.

use super::*;

/// `ts`'s jobs still unfinished at `end` whose deadline has passed: misses too (a job
/// due exactly at `end` with work left is late).
pub(super) fn late_at_end(ts: &TaskState, end: Ns) -> u64 {
    ts.job
        .iter()
        .chain(ts.backlog.iter())
        .filter(|j| j.deadline < end || (j.deadline == end && j.remaining > 0))
        .count() as u64
}

impl Engine {
    pub(super) fn finish(mut self, wall_s: f64) -> SimResult {
        let end = self.duration;
        for ts in self.tasks.iter_mut() {
            ts.stats.misses += late_at_end(ts, end);
        }
        if let Some(tr) = self.trace.as_mut() {
            for (cpu, c) in self.cpus.iter().enumerate() {
                if let Some(t) = c.curr {
                    if let Some(j) = self.tasks[t].job {
                        if end > c.since {
                            tr.push(Segment {
                                cpu,
                                task: t,
                                job: j.seq,
                                start: c.since,
                                end,
                            });
                        }
                    }
                }
            }
            tr.sort_by_key(|s| (s.start, s.cpu));
        }
        let ncpu = self.cpus.len();
        let secs = end as f64 / S as f64;
        let entitled = self.entitled.clone();
        let switches: u64 = self.cpus.iter().map(|c| c.switches).sum();
        let idle_sw: u64 = self.cpus.iter().map(|c| c.idle_switches).sum();
        let tasks: Vec<TaskResult> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, ts)| TaskResult {
                name: self.names[i].clone(),
                jobs: ts.stats.jobs,
                completed: ts.stats.completed,
                misses: ts.stats.misses,
                cpu_time_ns: ts.stats.cpu_time,
                mean_response_ns: if ts.stats.completed > 0 {
                    ts.stats.response_sum as f64 / ts.stats.completed as f64
                } else {
                    0.0
                },
                max_response_ns: ts.stats.response_max,
                max_tardiness_ns: ts.stats.tardiness_max,
                preemptions: ts.stats.preemptions,
                migrations: ts.stats.migrations,
                throttles: ts.stats.throttles,
                latency: self.latency[i].stats(),
                fair: (ts.class == ClassId::Fair).then(|| FairTaskStats {
                    nice: ts.nice,
                    weight: ts.weight,
                    share: ts.stats.cpu_time as f64 / end as f64,
                    entitled_share: entitled[i],
                    vruntime_ns: self.classes[ClassId::Fair as usize].vruntime(&ctx!(self), i),
                    finished_ns: ts.stats.finished_at,
                }),
                cpu: self.partition[i],
            })
            .collect();
        let fairness = self.has_fair().then(|| {
            let shares: Vec<(f64, Option<f64>)> = tasks
                .iter()
                .filter_map(|t| t.fair.as_ref())
                .map(|f| (f.share, f.entitled_share))
                .collect();
            let jain = schedlab_model::fair::jain_index(&shares);
            let work: Vec<Option<Ns>> = self
                .behaviour
                .iter()
                .enumerate()
                .filter(|(_, b)| b.as_ref().is_some_and(|b| b.work_left.is_some()))
                .map(|(i, _)| self.tasks[i].stats.finished_at)
                .collect();
            FairnessStats {
                jain_index: jain,
                max_vruntime_spread_ns: self.vruntime_spread,
                decisions: self.fair_decisions,
                makespan_ns: if work.is_empty() || work.iter().any(Option::is_none) {
                    None
                } else {
                    work.iter().flatten().max().copied()
                },
            }
        });
        SimResult {
            workload: self.workload_name.clone(),
            policy: self.policy_name.to_string(),
            placement: self.placement.name().to_string(),
            cpus: ncpu,
            duration_ns: end,
            hyperperiod_ns: self.feasibility.hyperperiod,
            horizon_complete: self.feasibility.complete(end),
            feasibility_interval_ns: self.feasibility.interval,
            partition: self.partition_report.take(),
            scheduler_structure: self.structure.take().flatten(),
            events: self.events_processed + self.ticks_counted,
            wall_s,
            jobs_released: tasks.iter().map(|t| t.jobs).sum(),
            jobs_completed: tasks.iter().map(|t| t.completed).sum(),
            jobs_aborted: self.tasks.iter().map(|t| t.stats.aborted).sum(),
            deadline_misses: tasks.iter().map(|t| t.misses).sum(),
            context_switches: switches,
            context_switches_per_cpu_per_s: switches as f64 / ncpu as f64 / secs,
            task_switches_per_cpu_per_s: (switches - idle_sw) as f64 / ncpu as f64 / secs,
            preemptions: tasks.iter().map(|t| t.preemptions).sum(),
            migrations: tasks.iter().map(|t| t.migrations).sum(),
            laxity_evaluations: self.laxity_evals.get(),
            scheduler_invocations: self.invocations,
            throttles: self.tasks.iter().map(|t| t.stats.throttles).sum(),
            per_cpu: self
                .cpus
                .iter()
                .enumerate()
                .map(|(cpu, c)| CpuResult {
                    cpu,
                    utilisation: c.busy as f64 / end as f64,
                    context_switches: c.switches,
                    idle_switches: c.idle_switches,
                })
                .collect(),
            fairness,
            kernel: self.kernel_stats(),
            tasks,
            trace: self.trace,
            log: self.log,
            work: WorkStats {
                class_calls: self.classes.iter().map(|c| c.calls()).sum(),
                cpu_visits: self.cpu_visits.get(),
                queue_steps: self.classes.iter().map(|c| c.queue_steps()).sum(),
                event_moves: self.events.moves(),
                ..self.work
            },
        }
    }
}
