//! What the doctor's checks may ask of a machine: files under /proc and /sys, a few
//! system calls, programs on PATH. [`LiveHost`] is this machine; the tests give the
//! checks a fake one, so every line of `schedlab doctor` can be tested for every state
//! (no tracefs, a VM, a held SCHED_DEADLINE bandwidth...) on any machine.

use std::path::Path;

/// A SCHED_DEADLINE thread found on the machine.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadlineThread {
    /// Thread id.
    pub tid: i32,
    /// Its `comm`.
    pub comm: String,
    /// Runtime (ns).
    pub runtime: u64,
    /// Period (ns).
    pub period: u64,
}

/// The machine the checks look at.
pub trait Host {
    /// The text of a file (None when missing or unreadable).
    fn read(&self, path: &str) -> Option<String>;
    /// Whether a path exists.
    fn exists(&self, path: &str) -> bool;
    /// Names of the entries of a directory (empty when missing).
    fn list(&self, dir: &str) -> Vec<String>;
    /// Whether this process may open `path` for writing (nothing is written).
    fn writable(&self, path: &str) -> bool;
    /// Why `path` cannot be opened for reading (None when it can).
    fn open_error(&self, path: &str) -> Option<std::io::Error>;
    /// CONFIG_HZ of the running kernel, if its configuration can be read.
    fn config_hz(&self, release: &str) -> Option<u32>;
    /// Whether a kernel configuration option is `=y` (None when the config is unreadable).
    fn config_option(&self, release: &str, option: &str) -> Option<bool>;
    /// Every SCHED_DEADLINE thread on the machine.
    fn deadline_threads(&self) -> Vec<DeadlineThread>;
    /// perf_event_open of a software context-switch counter on CPU 0 (all tasks), the
    /// runner's source of context switches: Ok or the error.
    fn perf_software(&self) -> Result<(), String>;
    /// perf_event_open of a hardware cycle counter on this process: Ok or the error.
    fn perf_hardware(&self) -> Result<(), String>;
    /// Whether a program is on PATH.
    fn has_program(&self, name: &str) -> bool;
    /// An environment variable.
    fn env(&self, name: &str) -> Option<String>;
    /// The bytes of a file, for binary devices such as /dev/cpu_dma_latency (None when
    /// missing or unreadable).
    fn read_bytes(&self, path: &str) -> Option<Vec<u8>> {
        self.read(path).map(String::into_bytes)
    }
}

/// This machine.
pub struct LiveHost;

impl Host for LiveHost {
    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }

    fn read_bytes(&self, path: &str) -> Option<Vec<u8>> {
        std::fs::read(path).ok()
    }

    fn exists(&self, path: &str) -> bool {
        Path::new(path).exists()
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    fn writable(&self, path: &str) -> bool {
        // Opening for writing checks the permission; closing without a write changes
        // nothing (the /proc/irq and tracefs files act on write only).
        std::fs::OpenOptions::new().write(true).open(path).is_ok()
    }

    fn open_error(&self, path: &str) -> Option<std::io::Error> {
        std::fs::File::open(path).err()
    }

    fn config_hz(&self, release: &str) -> Option<u32> {
        schedlab_linux::measure::config_hz(release)
    }

    fn config_option(&self, release: &str, option: &str) -> Option<bool> {
        let text = schedlab_linux::measure::kernel_config(release)?;
        Some(text.lines().any(|l| l == format!("{option}=y")))
    }

    fn deadline_threads(&self) -> Vec<DeadlineThread> {
        let mut found = Vec::new();
        for pid in self.list("/proc") {
            if !pid.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            for tid in self.list(&format!("/proc/{pid}/task")) {
                let Ok(t) = tid.parse::<i32>() else { continue };
                if let Ok(schedlab_linux::policy::KernelPolicy::Deadline {
                    runtime, period, ..
                }) = schedlab_linux::policy::get_policy(t)
                {
                    let comm = self
                        .read(&format!("/proc/{pid}/task/{tid}/comm"))
                        .unwrap_or_default()
                        .trim()
                        .to_string();
                    found.push(DeadlineThread {
                        tid: t,
                        comm,
                        runtime,
                        period,
                    });
                }
            }
        }
        found
    }

    fn perf_software(&self) -> Result<(), String> {
        perf_open(1, 3, -1, 0)
    }

    fn perf_hardware(&self) -> Result<(), String> {
        perf_open(0, 0, 0, -1)
    }

    fn has_program(&self, name: &str) -> bool {
        std::env::var_os("PATH").is_some_and(|paths| {
            std::env::split_paths(&paths).any(|d| {
                let p = d.join(name);
                std::fs::metadata(&p).is_ok_and(|m| m.is_file())
            })
        })
    }

    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes): enough for a plain counter.
#[repr(C)]
#[derive(Default)]
struct PerfAttr {
    type_: u32,
    size: u32,
    config: u64,
    rest: [u64; 6],
}

/// Open (and close at once) a counter of `type_`/`config` for `pid` on `cpu`.
fn perf_open(type_: u32, config: u64, pid: i32, cpu: i32) -> Result<(), String> {
    let attr = PerfAttr {
        type_,
        size: std::mem::size_of::<PerfAttr>() as u32,
        config,
        ..PerfAttr::default()
    };
    // SAFETY: attr is a valid VER0 perf_event_attr that outlives the call; no group, no
    // flags; the fd returned is closed at once.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfAttr,
            pid as libc::pid_t,
            cpu as libc::c_int,
            -1 as libc::c_int,
            0 as libc::c_ulong,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    // SAFETY: closing the fd opened above.
    unsafe { libc::close(fd as libc::c_int) };
    Ok(())
}

/// A machine made of strings, for tests.
#[cfg(test)]
#[derive(Default)]
pub struct FakeHost {
    /// Files and their text; a directory exists when a file lies under it.
    pub files: std::collections::BTreeMap<String, String>,
    /// Paths that exist but refuse to be opened (EPERM).
    pub refused: Vec<String>,
    /// Paths that may be opened for writing.
    pub writable: Vec<String>,
    /// Kernel configuration options set to y (None: config unreadable).
    pub config: Option<Vec<String>>,
    /// CONFIG_HZ.
    pub hz: Option<u32>,
    /// SCHED_DEADLINE threads.
    pub deadline: Vec<DeadlineThread>,
    /// perf results.
    pub perf_sw: Option<String>,
    /// perf hardware error.
    pub perf_hw: Option<String>,
    /// Programs on PATH.
    pub programs: Vec<String>,
    /// Environment.
    pub env: Vec<(String, String)>,
}

#[cfg(test)]
impl FakeHost {
    /// Add a file.
    pub fn file(mut self, path: &str, text: &str) -> FakeHost {
        self.files.insert(path.to_string(), text.to_string());
        self
    }
}

#[cfg(test)]
impl Host for FakeHost {
    fn read(&self, path: &str) -> Option<String> {
        if self.refused.iter().any(|p| p == path) {
            return None;
        }
        self.files.get(path).cloned()
    }

    fn exists(&self, path: &str) -> bool {
        let dir = format!("{}/", path.trim_end_matches('/'));
        self.files.contains_key(path)
            || self.refused.iter().any(|p| p == path)
            || self.files.keys().any(|k| k.starts_with(&dir))
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let dir = format!("{}/", dir.trim_end_matches('/'));
        let mut names: Vec<String> = self
            .files
            .keys()
            .filter_map(|k| k.strip_prefix(&dir))
            .map(|rest| rest.split('/').next().unwrap_or(rest).to_string())
            .collect();
        names.dedup();
        names
    }

    fn writable(&self, path: &str) -> bool {
        self.writable.iter().any(|p| p == path)
    }

    fn open_error(&self, path: &str) -> Option<std::io::Error> {
        if self.refused.iter().any(|p| p == path) {
            Some(std::io::Error::from_raw_os_error(libc::EPERM))
        } else if self.exists(path) {
            None
        } else {
            Some(std::io::Error::from_raw_os_error(libc::ENOENT))
        }
    }

    fn config_hz(&self, _release: &str) -> Option<u32> {
        self.hz
    }

    fn config_option(&self, _release: &str, option: &str) -> Option<bool> {
        self.config
            .as_ref()
            .map(|opts| opts.iter().any(|o| o == option))
    }

    fn deadline_threads(&self) -> Vec<DeadlineThread> {
        self.deadline.clone()
    }

    fn perf_software(&self) -> Result<(), String> {
        self.perf_sw.clone().map_or(Ok(()), Err)
    }

    fn perf_hardware(&self) -> Result<(), String> {
        self.perf_hw.clone().map_or(Ok(()), Err)
    }

    fn has_program(&self, name: &str) -> bool {
        self.programs.iter().any(|p| p == name)
    }

    fn env(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}
