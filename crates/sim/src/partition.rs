//! Partitioned placement: first-fit decreasing by utilisation.

use schedlab_model::Task;

/// Assign each task in `rt` (indices into `tasks`) to a CPU: tasks sorted by decreasing
/// utilisation (ties: workload order) go to the first allowed CPU whose load stays ≤ 1.
/// Returns the CPU per task in `rt` order, or a message naming the task that fits nowhere.
pub fn first_fit_decreasing(
    tasks: &[Task],
    rt: &[usize],
    cpus: usize,
) -> Result<Vec<usize>, String> {
    const EPS: f64 = 1e-9;
    let mut order: Vec<usize> = (0..rt.len()).collect();
    // Exact comparison of runtime/period by cross-multiplication, so ties are real ties.
    let util = |i: usize| -> (u128, u128) {
        let t = &tasks[rt[i]];
        (t.runtime as u128, t.period.unwrap_or(1) as u128)
    };
    order.sort_by(|&a, &b| {
        let (ra, pa) = util(a);
        let (rb, pb) = util(b);
        (rb * pa).cmp(&(ra * pb)).then(a.cmp(&b))
    });
    let mut load = vec![0.0f64; cpus];
    let mut out = vec![usize::MAX; rt.len()];
    for i in order {
        let t = &tasks[rt[i]];
        let u = t.utilisation();
        let Some(cpu) = (0..cpus).find(|&c| t.allowed_on(c) && load[c] + u <= 1.0 + EPS) else {
            let loads: Vec<String> = load
                .iter()
                .enumerate()
                .map(|(c, l)| format!("cpu{c} {l:.3}"))
                .collect();
            return Err(format!(
                "partitioned placement: task {} (utilisation {u:.3}) fits on no CPU by first-fit decreasing (loads: {}); use more CPUs or another placement",
                t.name,
                loads.join(", ")
            ));
        };
        load[cpu] += u;
        out[i] = cpu;
    }
    Ok(out)
}
