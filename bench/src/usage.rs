//! CPU time and peak memory, read from /proc.

/// Linux reports process times in USER_HZ, 100 on every mainstream architecture.
const TICKS_PER_SECOND: f64 = 100.0;

/// User plus system CPU time of this process so far, in milliseconds.
pub fn cpu_ms() -> f64 {
    cpu_ms_of("/proc/self/stat")
}

/// User plus system CPU time so far of the process whose `/proc/PID/stat` is `stat_path`,
/// in milliseconds.
pub fn cpu_ms_of(stat_path: &str) -> f64 {
    let Ok(stat) = std::fs::read_to_string(stat_path) else {
        return f64::NAN;
    };
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |index: usize| {
        fields
            .get(index)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    // utime and stime are fields 14 and 15, i.e. 11 and 12 after the state (field 3).
    (ticks(11) + ticks(12)) * 1000.0 / TICKS_PER_SECOND
}

/// Peak resident set size (VmHWM) of this process, in MiB.
pub fn peak_rss_mb() -> f64 {
    peak_rss_mb_of("/proc/self/status")
}

/// Peak resident set size (VmHWM) of the process whose `/proc/PID/status` is
/// `status_path`, in MiB.
pub fn peak_rss_mb_of(status_path: &str) -> f64 {
    status_mb(status_path, "VmHWM:")
}

/// Resident set size now (VmRSS) of the process whose `/proc/PID/status` is
/// `status_path`, in MiB.
pub fn rss_mb_of(status_path: &str) -> f64 {
    status_mb(status_path, "VmRSS:")
}

/// A `kB` field of a `/proc/PID/status`, in MiB.
fn status_mb(status_path: &str, field: &str) -> f64 {
    std::fs::read_to_string(status_path)
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(field))
                .and_then(|value| {
                    value
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<f64>()
                        .ok()
                })
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// CPU time of process `root` and all its live descendants, each with its reaped children
/// (cutime, cstime), in milliseconds: everything that tree has spent so far.
pub fn process_tree_cpu_ms(root: i32) -> f64 {
    let mut parents = Vec::new();
    for pid in engine::provider::process_ids() {
        if let Some(fields) = stat_fields(pid) {
            let parent = fields
                .get(1)
                .and_then(|f| f.parse::<i32>().ok())
                .unwrap_or(0);
            // utime, stime, cutime, cstime are fields 14-17, i.e. 11-14 after the state.
            let ticks: f64 = (11..=14)
                .filter_map(|index| fields.get(index).and_then(|f| f.parse::<f64>().ok()))
                .sum();
            parents.push((pid, parent, ticks));
        }
    }
    let mut members = vec![root];
    let mut grew = true;
    while grew {
        grew = false;
        for (pid, parent, _) in &parents {
            if members.contains(parent) && !members.contains(pid) {
                members.push(*pid);
                grew = true;
            }
        }
    }
    let ticks: f64 = parents
        .iter()
        .filter(|(pid, _, _)| members.contains(pid))
        .map(|(_, _, ticks)| ticks)
        .sum();
    ticks * 1000.0 / TICKS_PER_SECOND
}

/// The fields of /proc/PID/stat after the command name, starting with the state.
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = stat.rsplit(')').next()?;
    Some(after_name.split_whitespace().map(str::to_owned).collect())
}
