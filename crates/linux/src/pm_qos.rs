//! PM QoS CPU latency requests (`/dev/cpu_dma_latency`), as cyclictest holds them.
//!
//! Writing a 32-bit value to an open `/dev/cpu_dma_latency` asks the kernel to keep every
//! CPU out of idle states whose exit latency exceeds that many microseconds (0: no idle
//! state but polling). The request lives exactly as long as the file descriptor: the
//! kernel drops it when the file is closed, so it is released on every exit path of the
//! process, SIGKILL included — nothing has to be restored by hand.

use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};

/// The character device of the CPU latency PM QoS class.
pub const DEVICE: &str = "/dev/cpu_dma_latency";
/// The kernel's "no constraint" value (PM_QOS_CPU_LATENCY_DEFAULT_VALUE, 2000 s in µs).
pub const NO_CONSTRAINT_US: u32 = 2_000_000_000;

/// A CPU latency request, held while this value lives.
#[derive(Debug)]
pub struct PmQosRequest {
    // Kept open: closing it (drop, exit, kill) withdraws the request.
    _file: File,
    /// The latency asked for, µs.
    pub value_us: u32,
}

impl PmQosRequest {
    /// Open [`DEVICE`] and ask for `value_us`. The error names what is missing.
    pub fn hold(value_us: u32) -> Result<PmQosRequest, String> {
        if value_us > i32::MAX as u32 {
            return Err(format!(
                "--dma-latency: {value_us} us does not fit the kernel's 32-bit signed value"
            ));
        }
        let mut f = OpenOptions::new()
            .write(true)
            .open(DEVICE)
            .map_err(|e| open_error(&e))?;
        // The kernel takes a binary s32 (4 bytes) or a hex string; cyclictest writes binary.
        f.write_all(&(value_us as i32).to_ne_bytes())
            .map_err(|e| format!("cannot write a PM QoS request to {DEVICE}: {e}"))?;
        Ok(PmQosRequest { _file: f, value_us })
    }
}

fn open_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => format!(
            "cannot open {DEVICE} for writing: permission denied (it is root's, mode 0600: run \
             as root, or give your user write access to it); --laptop runs without the request"
        ),
        std::io::ErrorKind::NotFound => format!(
            "{DEVICE} does not exist (kernel without CONFIG_CPU_IDLE / PM QoS, or /dev not \
             populated); --laptop runs without the request"
        ),
        _ => format!("cannot open {DEVICE}: {e}"),
    }
}

/// The system-wide CPU latency limit now in force (µs), read from [`DEVICE`]; None when it
/// cannot be read (not root). [`NO_CONSTRAINT_US`] means no request is active.
pub fn current_limit_us() -> Option<u32> {
    // Opening adds a request at the default ("no constraint") value, which does not change
    // the limit; it is dropped again when the file closes here.
    let mut f = File::open(DEVICE).ok()?;
    let mut b = [0u8; 4];
    f.read_exact(&mut b).ok()?;
    Some(i32::from_ne_bytes(b).max(0) as u32)
}

/// What a run held, for its result.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PmQosReport {
    /// The request held for the run (µs); None when none was (`--laptop`, or it could not
    /// be opened — then a warning says why).
    pub dma_latency_us: Option<u32>,
    /// The system-wide limit read during the run (µs; 2000000000: none); None if unread.
    pub limit_us: Option<u32>,
}

impl PmQosReport {
    /// One line for the text output.
    pub fn describe(&self) -> String {
        let limit = match self.limit_us {
            Some(NO_CONSTRAINT_US) => ", system limit: none".to_string(),
            Some(v) => format!(", system limit {v} us"),
            None => String::new(),
        };
        match self.dma_latency_us {
            Some(v) => format!(
                "{DEVICE} held at {v} us for the run (CPUs kept out of idle states slower to leave){limit}"
            ),
            None => format!("no request held: CPUs may enter deep idle states{limit}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_beyond_the_kernels_s32_are_refused_before_opening() {
        let e = PmQosRequest::hold(u32::MAX).unwrap_err();
        assert!(e.contains("--dma-latency") && e.contains("32-bit"), "{e}");
    }

    #[test]
    fn the_description_says_which_setting_was_in_force() {
        let held = PmQosReport {
            dma_latency_us: Some(0),
            limit_us: Some(0),
        };
        assert!(held.describe().contains("held at 0 us"));
        let none = PmQosReport {
            dma_latency_us: None,
            limit_us: Some(NO_CONSTRAINT_US),
        };
        assert!(none.describe().starts_with("no request held"));
        assert!(none.describe().contains("system limit: none"));
    }
}
