//! Engine throughput: simulated events per wall second (criterion's "elem/s").
//!
//! - the seed's Table 1 set (4 CPUs, HZ=1000) over one simulated hour;
//! - a random 64-task set on 8 CPUs (UUniFast, total utilisation 6.0, periods 10..1000 ms)
//!   over 60 simulated seconds, in global and linux placement.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_model::{Overrides, Workload};
use schedlab_sim::{simulate, SimOptions};
use std::path::Path;
use std::time::Duration;

const TABLE1: &str = "
platform: { cpus: 4, hz: 1000 }
duration: 3600s
scheduler: { placement: linux }
tasks:
  - { name: big, count: 4, runtime: 60ms, period: 100ms }
  - { name: small, count: 8, runtime: 5ms, period: 60ms }
";

/// UUniFast (Bini & Buttazzo) utilisations summing to `total`, log-uniform periods.
fn random_set(n: usize, cpus: usize, total: f64, seconds: u64, placement: &str) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let utils = schedlab_analysis::utilisation::uunifast(&mut rng, n, total);
    let mut y = format!(
        "platform: {{ cpus: {cpus}, hz: 1000 }}\nduration: {seconds}s\nscheduler: {{ placement: {placement} }}\ntasks:\n"
    );
    for (i, u) in utils.iter().enumerate() {
        let period_ms = (10f64 * 100f64.powf(rng.random::<f64>())).round() as u64;
        let runtime_us = ((u.min(1.0) * period_ms as f64 * 1000.0).round() as u64).max(1);
        y += &format!("  - {{ name: t{i}, runtime: {runtime_us}us, period: {period_ms}ms }}\n");
    }
    y
}

fn bench_workload(c: &mut Criterion, name: &str, yaml: &str) {
    let w = Workload::parse_str(yaml, Path::new(name), &Overrides::default()).unwrap();
    let events = simulate(&w, &SimOptions::default()).unwrap().events;
    let mut g = c.benchmark_group(name);
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(15));
    g.throughput(Throughput::Elements(events));
    g.bench_function("edf", |b| {
        b.iter(|| simulate(&w, &SimOptions::default()).unwrap())
    });
    g.finish();
}

fn engine(c: &mut Criterion) {
    bench_workload(c, "table1_4cpu_1h_linux", TABLE1);
    bench_workload(
        c,
        "random64_8cpu_60s_global",
        &random_set(64, 8, 6.0, 60, "global"),
    );
    bench_workload(
        c,
        "random64_8cpu_60s_linux",
        &random_set(64, 8, 6.0, 60, "linux"),
    );
}

criterion_group!(benches, engine);
criterion_main!(benches);
