//! Perfetto protobuf export (`.pftrace`), what ui.perfetto.dev and trace_processor open.
//!
//! The messages below are the subset of Perfetto's official protos that schedlab writes,
//! declared by hand with the official field numbers (perfetto/protos/perfetto/trace/
//! trace.proto, trace_packet.proto, ftrace/ftrace_event_bundle.proto, ftrace/
//! ftrace_event.proto, ftrace/sched.proto, ps/process_tree.proto, track_event/
//! track_event.proto, track_descriptor.proto, counter_descriptor.proto,
//! process_descriptor.proto, debug_annotation.proto) and encoded by `prost`. In the
//! official protos several of the `TracePacket` fields are members of one `oneof data`;
//! on the wire a oneof member is an ordinary optional field, so each packet here sets
//! exactly one of them.
//!
//! What the file holds:
//! - one `ProcessTree` packet: process `PROCESS_PID` named after the workload, one thread
//!   per task (tid = `PROCESS_PID + 1 + i`, name = task name);
//! - per CPU, `FtraceEventBundle` packets (at most [`EVENTS_PER_BUNDLE`] events each) with
//!   one `sched_switch` per context switch exactly as the results count them (idle is
//!   pid 0, `swapper/N`; prev_state 0 = runnable/preempted, 1 = sleeping) and a
//!   `sched_wakeup` (`sched_wakeup_new` the first time) for every wake-up, in the bundle
//!   of the CPU the task runs on next;
//! - on trusted sequence 1, `TrackEvent`s: a counter "deadline misses" (cumulative, +1 at
//!   each missed deadline), and per task a track "<task> jobs" with one slice per job from
//!   release to deadline (`<task>#k`, with exec/finish/response as arguments) and an
//!   instant "miss <task>#k" at each missed deadline, plus counters "<task> laxity" and
//!   "<task> remaining" (ns), sampled at the job's release and at the start and end of
//!   each of its run segments.

use crate::schedule::{KernelEvent, PrevState, Schedule, PROCESS_PID};
use prost::Message;
use schedlab_model::Ns;

/// Largest number of ftrace events in one bundle packet.
pub const EVENTS_PER_BUNDLE: usize = 4096;

/// perfetto.protos.Trace
#[derive(Clone, PartialEq, Message)]
pub struct Trace {
    /// Packets.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// perfetto.protos.TracePacket (subset).
#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    /// Timestamp (ns, trace clock = boot time).
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// Writer sequence.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// oneof data: ftrace_events.
    #[prost(message, optional, tag = "1")]
    pub ftrace_events: Option<FtraceEventBundle>,
    /// oneof data: process_tree.
    #[prost(message, optional, tag = "2")]
    pub process_tree: Option<ProcessTree>,
    /// oneof data: track_event.
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    /// oneof data: track_descriptor.
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// perfetto.protos.FtraceEventBundle (subset).
#[derive(Clone, PartialEq, Message)]
pub struct FtraceEventBundle {
    /// CPU the events happened on.
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    /// Events, in time order.
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
}

/// perfetto.protos.FtraceEvent (subset).
#[derive(Clone, PartialEq, Message)]
pub struct FtraceEvent {
    /// Timestamp (ns).
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    /// pid of the task running when the event fired (common_pid).
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    /// oneof event: sched_switch.
    #[prost(message, optional, tag = "4")]
    pub sched_switch: Option<SchedSwitchFtraceEvent>,
    /// oneof event: sched_wakeup.
    #[prost(message, optional, tag = "17")]
    pub sched_wakeup: Option<SchedWakeupFtraceEvent>,
    /// oneof event: sched_wakeup_new.
    #[prost(message, optional, tag = "114")]
    pub sched_wakeup_new: Option<SchedWakeupFtraceEvent>,
}

/// perfetto.protos.SchedSwitchFtraceEvent
#[derive(Clone, PartialEq, Message)]
pub struct SchedSwitchFtraceEvent {
    /// prev_comm
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    /// prev_pid
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    /// prev_prio
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    /// prev_state (kernel task state bits: 0 = TASK_RUNNING, 1 = TASK_INTERRUPTIBLE)
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    /// next_comm
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    /// next_pid
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    /// next_prio
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// perfetto.protos.SchedWakeupFtraceEvent (same fields as SchedWakeupNewFtraceEvent).
#[derive(Clone, PartialEq, Message)]
pub struct SchedWakeupFtraceEvent {
    /// comm
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    /// pid
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    /// prio
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    /// success
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    /// target_cpu
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

/// perfetto.protos.ProcessTree
#[derive(Clone, PartialEq, Message)]
pub struct ProcessTree {
    /// processes
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    /// threads
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
}

/// perfetto.protos.ProcessTree.Process (subset).
#[derive(Clone, PartialEq, Message)]
pub struct Process {
    /// pid
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// ppid
    #[prost(int32, optional, tag = "2")]
    pub ppid: Option<i32>,
    /// cmdline
    #[prost(string, repeated, tag = "3")]
    pub cmdline: Vec<String>,
}

/// perfetto.protos.ProcessTree.Thread (subset).
#[derive(Clone, PartialEq, Message)]
pub struct Thread {
    /// tid
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    /// name
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// tgid
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

/// perfetto.protos.TrackDescriptor (subset).
#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    /// uuid
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// name
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// process
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    /// parent_uuid
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// counter
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// perfetto.protos.ProcessDescriptor (subset).
#[derive(Clone, PartialEq, Message)]
pub struct ProcessDescriptor {
    /// pid
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// process_name
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// perfetto.protos.CounterDescriptor (subset).
#[derive(Clone, PartialEq, Message)]
pub struct CounterDescriptor {
    /// unit: UNIT_TIME_NS = 1, UNIT_COUNT = 2.
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
}

/// perfetto.protos.TrackEvent (subset).
#[derive(Clone, PartialEq, Message)]
pub struct TrackEvent {
    /// debug_annotations
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// type: SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4.
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// track_uuid
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// categories
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    /// name
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    /// counter_value
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
}

/// perfetto.protos.DebugAnnotation (subset).
#[derive(Clone, PartialEq, Message)]
pub struct DebugAnnotation {
    /// int_value
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    /// string_value
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
    /// name
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
}

const SLICE_BEGIN: i32 = 1;
const SLICE_END: i32 = 2;
const INSTANT: i32 = 3;
const COUNTER: i32 = 4;
const UNIT_TIME_NS: i32 = 1;
const UNIT_COUNT: i32 = 2;
const SEQ: u32 = 1;
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

const PROCESS_TRACK: u64 = 1;
const MISSES_TRACK: u64 = 2;
fn jobs_track(task: usize) -> u64 {
    100 + 3 * task as u64
}
fn laxity_track(task: usize) -> u64 {
    101 + 3 * task as u64
}
fn remaining_track(task: usize) -> u64 {
    102 + 3 * task as u64
}

fn idle_comm(cpu: usize) -> String {
    format!("swapper/{cpu}")
}

/// Encode `s` as a Perfetto trace.
pub fn encode(s: &Schedule) -> Vec<u8> {
    let mut out = Vec::new();
    let mut put = |p: TracePacket| {
        Trace { packet: vec![p] }
            .encode(&mut out)
            .expect("a Vec grows as needed");
    };

    put(TracePacket {
        process_tree: Some(ProcessTree {
            processes: vec![Process {
                pid: Some(PROCESS_PID as i32),
                ppid: Some(1),
                cmdline: vec!["schedlab".into(), s.name.clone()],
            }],
            threads: s
                .tasks
                .iter()
                .map(|t| Thread {
                    tid: Some(t.pid as i32),
                    name: Some(t.name.clone()),
                    tgid: Some(PROCESS_PID as i32),
                })
                .collect(),
        }),
        ..Default::default()
    });

    for bundle in ftrace_bundles(s) {
        put(TracePacket {
            ftrace_events: Some(bundle),
            ..Default::default()
        });
    }

    for (i, p) in track_packets(s).into_iter().enumerate() {
        let mut p = p;
        p.trusted_packet_sequence_id = Some(SEQ);
        if i == 0 {
            p.sequence_flags = Some(SEQ_INCREMENTAL_STATE_CLEARED);
        }
        put(p);
    }
    out
}

/// Per-CPU ftrace bundles: sched_switch and sched_wakeup(_new) events in time order.
fn ftrace_bundles(s: &Schedule) -> Vec<FtraceEventBundle> {
    let comm = |t: Option<usize>, cpu: usize| match t {
        Some(t) => s.tasks[t].name.clone(),
        None => idle_comm(cpu),
    };
    let pid = |t: Option<usize>| t.map_or(0, |t| s.tasks[t].pid as i32);
    let prio = |t: Option<usize>| t.map_or(120, |t| s.tasks[t].prio);

    let mut per_cpu: Vec<Vec<FtraceEvent>> = vec![Vec::new(); s.cpus];
    for ev in s.kernel_events() {
        let fe = match ev {
            KernelEvent::Wakeup { wakeup: w, current } => {
                let e = SchedWakeupFtraceEvent {
                    comm: Some(s.tasks[w.task].name.clone()),
                    pid: Some(s.tasks[w.task].pid as i32),
                    prio: Some(s.tasks[w.task].prio),
                    success: Some(1),
                    target_cpu: Some(w.target_cpu as i32),
                };
                FtraceEvent {
                    timestamp: Some(w.time),
                    pid: Some(pid(current) as u32),
                    sched_wakeup_new: w.first.then(|| e.clone()),
                    sched_wakeup: (!w.first).then_some(e),
                    ..Default::default()
                }
            }
            KernelEvent::Switch(x) => FtraceEvent {
                timestamp: Some(x.time),
                pid: Some(pid(x.prev) as u32),
                sched_switch: Some(SchedSwitchFtraceEvent {
                    prev_comm: Some(comm(x.prev, x.cpu)),
                    prev_pid: Some(pid(x.prev)),
                    prev_prio: Some(prio(x.prev)),
                    prev_state: Some(match (x.prev, x.prev_state) {
                        (None, _) | (_, PrevState::Preempted) => 0,
                        (_, PrevState::Sleeping) => 1,
                    }),
                    next_comm: Some(comm(x.next, x.cpu)),
                    next_pid: Some(pid(x.next)),
                    next_prio: Some(prio(x.next)),
                }),
                ..Default::default()
            },
        };
        per_cpu[ev.cpu()].push(fe);
    }
    let mut bundles = Vec::new();
    for (cpu, evs) in per_cpu.into_iter().enumerate() {
        for chunk in evs.chunks(EVENTS_PER_BUNDLE) {
            bundles.push(FtraceEventBundle {
                cpu: Some(cpu as u32),
                event: chunk.to_vec(),
            });
        }
    }
    bundles
}

fn descriptor(uuid: u64, name: String, unit: Option<i32>) -> TracePacket {
    TracePacket {
        track_descriptor: Some(TrackDescriptor {
            uuid: Some(uuid),
            name: Some(name),
            parent_uuid: Some(PROCESS_TRACK),
            counter: unit.map(|u| CounterDescriptor { unit: Some(u) }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn event(time: Ns, track: u64, kind: i32, name: Option<String>) -> TracePacket {
    TracePacket {
        timestamp: Some(time),
        track_event: Some(TrackEvent {
            r#type: Some(kind),
            track_uuid: Some(track),
            name,
            categories: vec!["schedlab".into()],
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn counter(time: Ns, track: u64, value: i64) -> TracePacket {
    let mut p = event(time, track, COUNTER, None);
    if let Some(e) = p.track_event.as_mut() {
        e.counter_value = Some(value);
        e.categories.clear();
    }
    p
}

fn int_arg(name: &str, v: i64) -> DebugAnnotation {
    DebugAnnotation {
        name: Some(name.into()),
        int_value: Some(v),
        ..Default::default()
    }
}

/// Track descriptors, then the track events in time order.
fn track_packets(s: &Schedule) -> Vec<TracePacket> {
    let mut out = vec![TracePacket {
        track_descriptor: Some(TrackDescriptor {
            uuid: Some(PROCESS_TRACK),
            process: Some(ProcessDescriptor {
                pid: Some(PROCESS_PID as i32),
                process_name: Some(s.name.clone()),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }];
    out.push(descriptor(
        MISSES_TRACK,
        "deadline misses".into(),
        Some(UNIT_COUNT),
    ));
    for (i, t) in s.tasks.iter().enumerate() {
        out.push(descriptor(jobs_track(i), format!("{} jobs", t.name), None));
        out.push(descriptor(
            laxity_track(i),
            format!("{} laxity", t.name),
            Some(UNIT_TIME_NS),
        ));
        out.push(descriptor(
            remaining_track(i),
            format!("{} remaining", t.name),
            Some(UNIT_TIME_NS),
        ));
    }

    // (time, order, seq, packet): at one instant a slice ends before the next begins,
    // counters and instants in between.
    let mut evs: Vec<(Ns, u8, usize, TracePacket)> = Vec::new();
    let push = |evs: &mut Vec<_>, t: Ns, o: u8, p: TracePacket| {
        let n = evs.len();
        evs.push((t, o, n, p));
    };
    push(&mut evs, 0, 1, counter(0, MISSES_TRACK, 0));
    let mut misses: Vec<Ns> = s
        .jobs
        .iter()
        .filter(|j| j.missed && j.deadline <= s.duration)
        .map(|j| j.deadline)
        .collect();
    misses.sort_unstable();
    for (k, &t) in misses.iter().enumerate() {
        push(&mut evs, t, 1, counter(t, MISSES_TRACK, k as i64 + 1));
    }

    // Run segments per (task, job), in start order.
    let mut segs: Vec<Vec<(Ns, Ns)>> = vec![Vec::new(); s.jobs.len()];
    let mut first_job = vec![0usize; s.tasks.len() + 1];
    for j in &s.jobs {
        first_job[j.task + 1] += 1;
    }
    for i in 0..s.tasks.len() {
        first_job[i + 1] += first_job[i];
    }
    for g in &s.segments {
        let idx = first_job[g.task] + g.job as usize;
        if idx < first_job[g.task + 1] {
            segs[idx].push((g.start, g.end));
        }
    }

    for (idx, j) in s.jobs.iter().enumerate() {
        let name = &s.tasks[j.task].name;
        let jt = jobs_track(j.task);
        let mut begin = event(
            j.release,
            jt,
            SLICE_BEGIN,
            Some(format!("{name}#{}", j.job)),
        );
        if let Some(e) = begin.track_event.as_mut() {
            e.debug_annotations.push(int_arg("exec_ns", j.exec as i64));
            if j.has_deadline() {
                e.debug_annotations
                    .push(int_arg("deadline_ns", j.deadline as i64));
            }
            if let Some(f) = j.finish {
                e.debug_annotations.push(int_arg("finish_ns", f as i64));
                e.debug_annotations
                    .push(int_arg("response_ns", (f - j.release) as i64));
            }
            e.debug_annotations
                .push(int_arg("missed", i64::from(j.missed)));
        }
        push(&mut evs, j.release, 3, begin);
        // The window of a job without a deadline (a fair task's burst) ends when it does.
        let end = if j.has_deadline() {
            j.deadline
        } else {
            j.finish.unwrap_or(Ns::MAX)
        }
        .min(s.duration);
        push(&mut evs, end, 0, event(end, jt, SLICE_END, None));
        if j.missed && j.deadline <= s.duration {
            push(
                &mut evs,
                j.deadline,
                2,
                event(
                    j.deadline,
                    jt,
                    INSTANT,
                    Some(format!("miss {name}#{}", j.job)),
                ),
            );
        }

        // Laxity and remaining work at the release and around every run segment.
        let (lt, rt) = (laxity_track(j.task), remaining_track(j.task));
        let mut rem = j.exec as i64;
        let sample = |evs: &mut Vec<_>, t: Ns, rem: i64| {
            if j.has_deadline() {
                let lax = j.deadline as i64 - t as i64 - rem;
                push(evs, t, 1, counter(t, lt, lax));
            }
            push(evs, t, 1, counter(t, rt, rem));
        };
        // The release is sampled only when the task's previous job is over by then
        // (otherwise that job's samples still describe the task).
        let prev_done = idx == 0
            || s.jobs[idx - 1].task != j.task
            || s.jobs[idx - 1].finish.is_some_and(|f| f <= j.release);
        if prev_done {
            sample(&mut evs, j.release, rem);
        }
        segs[idx].sort_unstable();
        for &(a, b) in &segs[idx] {
            sample(&mut evs, a, rem);
            rem = (rem - (b - a) as i64).max(0);
            if j.finish == Some(b) {
                rem = 0;
            }
            sample(&mut evs, b, rem);
        }
    }
    evs.sort_by_key(|&(t, o, q, _)| (t, o, q));
    out.extend(evs.into_iter().map(|e| e.3));
    out
}
