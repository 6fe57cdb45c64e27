//! A criterion measurement of the benchmark thread's CPU time (Linux
//! `/proc/thread-self/schedstat`, scheduler-tick resolution: keep samples ≥ 100 ms). On a
//! shared, overloaded machine wall time mostly measures the other processes; CPU time does
//! not. Throughputs are then "per CPU-second". Selected with `AGENTX_BENCH_CPU=1`.

use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, Throughput};

/// The current thread's CPU time.
pub struct ThreadCpu;

fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|f| f.parse().ok()))
        .unwrap_or(0)
}

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = match typical {
            t if t < 1e3 => (1.0, "ns cpu"),
            t if t < 1e6 => (1e3, "µs cpu"),
            t if t < 1e9 => (1e6, "ms cpu"),
            _ => (1e9, "s cpu"),
        };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }
    fn scale_throughputs(
        &self,
        _: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let (per_iter, unit) = match throughput {
            Throughput::Bytes(b) | Throughput::BytesDecimal(b) => {
                (*b as f64 / 1_048_576.0, "MiB/s cpu")
            }
            Throughput::Bits(b) => (*b as f64, "bit/s cpu"),
            Throughput::Elements(e) | Throughput::ElementsAndBytes { elements: e, .. } => {
                (*e as f64, "elem/s cpu")
            }
        };
        values
            .iter_mut()
            .for_each(|v| *v = per_iter * 1e9 / v.max(1.0));
        unit
    }
    fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
        "ns"
    }
}

/// A bench's `main`: runs `cpu` (its groups on thread CPU time) when `AGENTX_BENCH_CPU` is set,
/// `wall` otherwise; ten samples, 1 s warm-up and 3 s measurement unless the command line
/// says otherwise. Pass the same generic group function twice.
pub fn run(wall: fn(&mut Criterion<WallTime>), cpu: fn(&mut Criterion<ThreadCpu>)) {
    fn config<M: Measurement>(c: Criterion<M>) -> Criterion<M> {
        c.sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3))
            .configure_from_args()
    }
    if std::env::var_os("AGENTX_BENCH_CPU").is_some() {
        eprintln!("measuring thread CPU time (AGENTX_BENCH_CPU)");
        let mut c = config(Criterion::default().with_measurement(ThreadCpu));
        cpu(&mut c);
        c.final_summary();
    } else {
        let mut c = config(Criterion::<WallTime>::default());
        wall(&mut c);
        c.final_summary();
    }
}
