//! Report output: the common JSON envelope (tool, version, command, clock) and a plain-text
//! rendering of the same object for people.

use serde::Serialize;
use serde_json::Value;

use crate::sys;

/// What the timestamps in a report mean.
#[derive(Serialize, Debug, Clone)]
pub struct ClockInfo {
    /// Clock of every `*_realtime_ns` timestamp and of packet timestamps: "CLOCK_REALTIME".
    pub timestamps: &'static str,
    /// Clock of durations and pacing: "CLOCK_MONOTONIC".
    pub durations: &'static str,
    /// Kernel clocksource (e.g. "tsc", "kvm-clock"), null if unreadable.
    pub clocksource: Option<String>,
    /// CLOCK_REALTIME resolution, ns.
    pub realtime_resolution_ns: u64,
    /// CLOCK_MONOTONIC resolution, ns.
    pub monotonic_resolution_ns: u64,
    /// Kernel's NTP/PTP sync flag (adjtimex), null if unknown. One-way delays between hosts
    /// are meaningful only when both ends are synchronised.
    pub synchronized: Option<bool>,
    /// CLOCK_REALTIME when the command started, ns since the Unix epoch.
    pub start_realtime_ns: u64,
    /// CLOCK_MONOTONIC when the command started, ns.
    pub start_monotonic_ns: u64,
}

impl ClockInfo {
    /// Read the clocks now.
    pub fn now() -> Self {
        ClockInfo {
            timestamps: "CLOCK_REALTIME",
            durations: "CLOCK_MONOTONIC",
            clocksource: std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .ok()
            .map(|s| s.trim().to_string()),
            realtime_resolution_ns: sys::clock_res_ns(sys::Clock::Realtime),
            monotonic_resolution_ns: sys::clock_res_ns(sys::Clock::Monotonic),
            synchronized: sys::clock_synchronized(),
            start_realtime_ns: sys::real_ns(),
            start_monotonic_ns: sys::mono_ns(),
        }
    }
}

/// "release" or "debug": an unoptimised probe does its user-space work (pacing, accounting) slower, so
/// every report says which one measured.
pub const BUILD: &str = if cfg!(debug_assertions) {
    "debug"
} else {
    "release"
};

#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    tool: &'static str,
    version: &'static str,
    build: &'static str,
    command: &'a str,
    clock: &'a ClockInfo,
    #[serde(flatten)]
    body: &'a T,
}

/// The report as a JSON value with the envelope fields first.
pub fn to_value<T: Serialize>(command: &str, clock: &ClockInfo, body: &T) -> Value {
    serde_json::to_value(Envelope {
        tool: "vnb-probe",
        version: env!("CARGO_PKG_VERSION"),
        build: BUILD,
        command,
        clock,
        body,
    })
    .unwrap_or(Value::Null)
}

/// Print the report: one JSON object on one line, or indented text.
pub fn emit<T: Serialize>(json: bool, command: &str, clock: &ClockInfo, body: &T) {
    let v = to_value(command, clock, body);
    if json {
        println!("{v}");
    } else {
        let mut out = String::new();
        render(&v, 0, &mut out);
        print!("{out}");
    }
}

fn render(v: &Value, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match x {
                    Value::Object(_) => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        render(x, depth + 1, out);
                    }
                    Value::Array(a) if a.iter().all(|e| !e.is_object()) => {
                        if a.len() <= 12 {
                            let s: Vec<String> = a.iter().map(scalar).collect();
                            out.push_str(&format!("{pad}{k}: [{}]\n", s.join(", ")));
                        } else {
                            out.push_str(&format!("{pad}{k}: [{} values; see --json]\n", a.len()));
                        }
                    }
                    Value::Array(a) => {
                        if a.len() > 16 {
                            out.push_str(&format!("{pad}{k}: [{} records; see --json]\n", a.len()));
                        } else {
                            for (i, e) in a.iter().enumerate() {
                                out.push_str(&format!("{pad}{k}[{i}]:\n"));
                                render(e, depth + 1, out);
                            }
                        }
                    }
                    _ => out.push_str(&format!("{pad}{k}: {}\n", scalar(x))),
                }
            }
        }
        _ => out.push_str(&format!("{pad}{}\n", scalar(v))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                format!("{f:.6}")
            } else {
                n.to_string()
            }
        }
        other => other.to_string(),
    }
}

/// Link-layer frame size (Ethernet header + FCS, padded to the 64-byte minimum) of a UDP
/// payload of `payload` bytes over IPv4 (`v6` false) or IPv6.
pub fn l2_frame_bytes(payload: usize, v6: bool) -> usize {
    let ip = if v6 { 40 } else { 20 };
    (payload + 8 + ip + 14 + 4).max(64)
}

/// Ethernet preamble + SFD + inter-frame gap, bytes.
pub const L1_OVERHEAD_BYTES: usize = 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_sizes() {
        assert_eq!(l2_frame_bytes(18, false), 64);
        assert_eq!(l2_frame_bytes(1, false), 64);
        assert_eq!(l2_frame_bytes(1472, false), 1518);
        assert_eq!(l2_frame_bytes(18, true), 84);
    }

    #[test]
    fn envelope_fields_first() {
        #[derive(Serialize)]
        struct B {
            x_ns: u64,
        }
        let c = ClockInfo::now();
        let v = to_value("cpushare", &c, &B { x_ns: 5 });
        assert_eq!(v["tool"], "vnb-probe");
        assert_eq!(v["build"], BUILD);
        assert_eq!(v["command"], "cpushare");
        assert_eq!(v["x_ns"], 5);
        assert_eq!(v["clock"]["timestamps"], "CLOCK_REALTIME");
    }
}
