//! The few system calls the generator makes besides socket reads and writes: epoll with a
//! nanosecond timeout, the thread's timer slack, the open-file limit, and "is stdout a terminal".

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub const READABLE: u32 = libc::EPOLLIN as u32 | libc::EPOLLRDHUP as u32;
pub const WRITABLE: u32 = libc::EPOLLOUT as u32;

/// A level-triggered epoll instance; events carry the connection's index.
pub struct Epoll {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

/// `epoll_pwait2` (Linux 5.11+) was refused once: every later wait uses `epoll_wait`.
static NO_PWAIT2: AtomicBool = AtomicBool::new(false);

impl Epoll {
    pub fn new(capacity: usize) -> io::Result<Epoll> {
        // SAFETY: a plain syscall; the result is checked before it is used as a descriptor.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Epoll { fd, events: vec![libc::epoll_event { events: 0, u64: 0 }; capacity.clamp(16, 1024)] })
    }

    fn control(&self, op: libc::c_int, fd: RawFd, interest: u32, token: usize) -> io::Result<()> {
        let mut event = libc::epoll_event { events: interest, u64: token as u64 };
        // SAFETY: `event` lives across the call; the kernel copies it.
        if unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut event) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn add(&self, fd: RawFd, interest: u32, token: usize) -> io::Result<()> {
        self.control(libc::EPOLL_CTL_ADD, fd, interest, token)
    }

    pub fn modify(&self, fd: RawFd, interest: u32, token: usize) -> io::Result<()> {
        self.control(libc::EPOLL_CTL_MOD, fd, interest, token)
    }

    /// Waits at most `timeout` (`None`: until an event; zero: just polls) and returns the ready
    /// `(token, events)` pairs. Timeouts under a millisecond are kept with `epoll_pwait2`.
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<impl Iterator<Item = (usize, u32)> + '_> {
        let count = match self.wait_once(timeout) {
            Ok(count) => count,
            // A signal: the caller loops anyway.
            Err(error) if error.kind() == io::ErrorKind::Interrupted => 0,
            Err(error) => return Err(error),
        };
        Ok(self.events[..count].iter().map(ready))
    }

    fn wait_once(&mut self, timeout: Option<Duration>) -> io::Result<usize> {
        let capacity = self.events.len() as libc::c_int;
        let events = self.events.as_mut_ptr();
        let fd = self.fd.as_raw_fd();
        let count = match timeout {
            Some(timeout) if !timeout.is_zero() && !NO_PWAIT2.load(Ordering::Relaxed) => {
                let spec = libc::timespec {
                    tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
                    tv_nsec: timeout.subsec_nanos() as libc::c_long,
                };
                // SAFETY: `events` has `capacity` entries; `spec` lives across the call; no
                // signal mask (null) means the thread's own.
                let count = unsafe {
                    libc::syscall(
                        libc::SYS_epoll_pwait2,
                        fd,
                        events,
                        capacity,
                        &spec as *const libc::timespec,
                        std::ptr::null::<libc::sigset_t>(),
                        0usize,
                    )
                };
                if count < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                    NO_PWAIT2.store(true, Ordering::Relaxed);
                    return self.wait_once(Some(timeout));
                }
                count as libc::c_int
            }
            _ => {
                let millis = match timeout {
                    None => -1,
                    // Rounded up: never wake before the deadline.
                    Some(timeout) => timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as libc::c_int,
                };
                // SAFETY: `events` has `capacity` entries.
                unsafe { libc::epoll_wait(fd, events, capacity, millis) }
            }
        };
        if count < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(count as usize)
    }
}

fn ready(event: &libc::epoll_event) -> (usize, u32) {
    (event.u64 as usize, event.events)
}

/// Asks the kernel to fire this thread's timers on time instead of batching them within the
/// default 50 µs slack.
pub fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Raises the soft open-file limit to at least `wanted` (up to the hard limit); returns the
/// soft limit in force afterwards.
pub fn raise_open_files(wanted: u64) -> u64 {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid out-parameter.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 0;
    }
    if limit.rlim_cur >= wanted {
        return limit.rlim_cur;
    }
    if limit.rlim_max < wanted {
        // Root may raise the hard limit too.
        let both = libc::rlimit { rlim_cur: wanted, rlim_max: wanted };
        // SAFETY: `both` is a valid rlimit.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &both) } == 0 {
            return wanted;
        }
    }
    let raised = libc::rlimit { rlim_cur: wanted.min(limit.rlim_max), rlim_max: limit.rlim_max };
    // SAFETY: `raised` is a valid rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        raised.rlim_cur
    } else {
        limit.rlim_cur
    }
}

pub fn stdout_is_terminal() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(libc::STDOUT_FILENO) == 1 }
}
