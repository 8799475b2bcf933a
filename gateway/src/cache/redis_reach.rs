//! Whether the store may talk to Redis now: after a failure it pauses for a doubling backoff,
//! during which commands are not sent at all; once the pause ends, one command probes (the
//! others still are not sent) and its success ends the pause. A state machine without IO or
//! clock: `now` is an argument.

use std::time::{Duration, Instant};

/// The first pause after a failure.
pub(crate) const PAUSE_FIRST: Duration = Duration::from_millis(100);
/// The longest pause: a Redis that comes back is used again within this.
pub(crate) const PAUSE_MAX: Duration = Duration::from_secs(2);

/// Redis's reachability as the store's commands saw it.
#[derive(Debug)]
pub(crate) struct Reach {
    state: State,
    /// Changes whenever a command's failure stops mattering: at each change of state and each
    /// probe. A failure counts only when its command was sent in the current epoch, so that
    /// the commands that were under way when Redis went away do not lengthen the pause.
    epoch: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Up,
    /// Nothing is sent before `retry_at`; `pause` is the pause that ends there.
    Out {
        retry_at: Instant,
        pause: Duration,
    },
}

/// Permission to send one command, handed back with its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket {
    epoch: u64,
}

/// What a command's outcome changed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Change {
    None,
    /// Redis was reachable and now is not.
    WentOut,
    /// Redis was out of reach and answered.
    CameBack,
}

impl Reach {
    pub(crate) fn new() -> Reach {
        Reach { state: State::Up, epoch: 0 }
    }

    /// Whether a command may go out now. When a pause has just ended this one is the probe, and
    /// the next ones wait for its outcome — at most `probe_limit` (the command timeout), after
    /// which another command probes (the first one's caller may have given up on it).
    pub(crate) fn may_send(&mut self, now: Instant, probe_limit: Duration) -> Option<Ticket> {
        match &mut self.state {
            State::Up => Some(Ticket { epoch: self.epoch }),
            State::Out { retry_at, .. } if now >= *retry_at => {
                *retry_at = now + probe_limit;
                self.epoch += 1;
                Some(Ticket { epoch: self.epoch })
            }
            State::Out { .. } => None,
        }
    }

    /// A command was answered: Redis is reachable, whichever command it was.
    pub(crate) fn answered(&mut self) -> Change {
        match self.state {
            State::Up => Change::None,
            State::Out { .. } => {
                self.state = State::Up;
                self.epoch += 1;
                Change::CameBack
            }
        }
    }

    /// A command failed at `now`: Redis pauses for [`PAUSE_FIRST`], a failed probe for twice
    /// the last pause (at most [`PAUSE_MAX`]). A command sent before the last change is ignored.
    pub(crate) fn failed(&mut self, ticket: Ticket, now: Instant) -> Change {
        if ticket.epoch != self.epoch {
            return Change::None;
        }
        self.epoch += 1;
        match self.state {
            State::Up => {
                self.state = State::Out { retry_at: now + PAUSE_FIRST, pause: PAUSE_FIRST };
                Change::WentOut
            }
            State::Out { pause, .. } => {
                let pause = (pause * 2).min(PAUSE_MAX);
                self.state = State::Out { retry_at: now + pause, pause };
                Change::None
            }
        }
    }

    /// When the next command may go out, while Redis is out of reach.
    #[cfg(test)]
    pub(crate) fn retry_at(&self) -> Option<Instant> {
        match self.state {
            State::Up => None,
            State::Out { retry_at, .. } => Some(retry_at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_millis(50);

    #[test]
    fn sends_freely_while_up() {
        let mut reach = Reach::new();
        let now = Instant::now();
        let a = reach.may_send(now, LIMIT).unwrap();
        assert_eq!(reach.answered(), Change::None);
        assert_eq!(reach.may_send(now, LIMIT), Some(a));
        assert_eq!(reach.retry_at(), None);
    }

    #[test]
    fn pauses_after_a_failure_and_doubles_up_to_the_maximum() {
        let mut reach = Reach::new();
        let mut now = Instant::now();
        let ticket = reach.may_send(now, LIMIT).unwrap();
        assert_eq!(reach.failed(ticket, now), Change::WentOut);
        assert_eq!(reach.retry_at(), Some(now + PAUSE_FIRST));
        assert_eq!(reach.may_send(now + PAUSE_FIRST - Duration::from_millis(1), LIMIT), None);
        let mut pause = PAUSE_FIRST;
        for _ in 0..8 {
            now += pause;
            let probe = reach.may_send(now, LIMIT).expect("the probe after the pause");
            assert_eq!(reach.may_send(now, LIMIT), None, "one probe at a time");
            assert_eq!(reach.failed(probe, now), Change::None);
            pause = (pause * 2).min(PAUSE_MAX);
            assert_eq!(reach.retry_at(), Some(now + pause));
        }
        assert_eq!(pause, PAUSE_MAX);
    }

    #[test]
    fn a_successful_probe_ends_the_pause_and_resets_the_backoff() {
        let mut reach = Reach::new();
        let now = Instant::now();
        let t = reach.may_send(now, LIMIT).unwrap();
        reach.failed(t, now);
        let probe = reach.may_send(now + PAUSE_FIRST, LIMIT).unwrap();
        let probe_failed_at = now + PAUSE_FIRST;
        reach.failed(probe, probe_failed_at);
        let later = probe_failed_at + PAUSE_FIRST * 2;
        reach.may_send(later, LIMIT).unwrap();
        assert_eq!(reach.answered(), Change::CameBack);
        assert_eq!(reach.retry_at(), None);
        let t = reach.may_send(later, LIMIT).unwrap();
        assert_eq!(reach.failed(t, later), Change::WentOut);
        assert_eq!(reach.retry_at(), Some(later + PAUSE_FIRST), "the backoff starts over");
    }

    #[test]
    fn failures_of_commands_sent_before_the_outage_do_not_lengthen_it() {
        let mut reach = Reach::new();
        let now = Instant::now();
        let tickets: Vec<Ticket> = (0..5).map(|_| reach.may_send(now, LIMIT).unwrap()).collect();
        assert_eq!(reach.failed(tickets[0], now), Change::WentOut);
        for t in &tickets[1..] {
            assert_eq!(reach.failed(*t, now + Duration::from_millis(10)), Change::None);
        }
        assert_eq!(reach.retry_at(), Some(now + PAUSE_FIRST));
    }

    #[test]
    fn a_probe_that_never_reports_lets_another_probe_after_the_limit() {
        let mut reach = Reach::new();
        let now = Instant::now();
        let t = reach.may_send(now, LIMIT).unwrap();
        reach.failed(t, now);
        let at = now + PAUSE_FIRST;
        let abandoned = reach.may_send(at, LIMIT).unwrap();
        assert_eq!(reach.may_send(at + LIMIT - Duration::from_millis(1), LIMIT), None);
        let second = reach.may_send(at + LIMIT, LIMIT).unwrap();
        assert_eq!(reach.failed(abandoned, at + LIMIT), Change::None, "the abandoned probe no longer counts");
        assert_eq!(reach.retry_at(), Some(at + LIMIT * 2));
        assert_eq!(reach.failed(second, at + LIMIT), Change::None);
        assert_eq!(reach.retry_at(), Some(at + LIMIT + PAUSE_FIRST * 2));
    }
}
