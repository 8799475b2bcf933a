//! Durations in Pointwork's own section: a number of seconds, or a string with a unit
//! (`500ms`, `30s`, `2m`, `1h`, fractions allowed: `1.5s`).

use std::time::Duration;

use crate::kinds::Kind;
use crate::node::Node;

pub(crate) const DURATION: Kind<Duration> = Kind {
    expected: r#"a duration greater than 0, like 30, "500ms", "30s" or "2m""#,
    parse: |n| {
        match n {
            Node::Int(i) => Duration::try_from_secs_f64(*i as f64).ok(),
            Node::Float(x) => Duration::try_from_secs_f64(*x).ok(),
            Node::Str(s) => parse_duration(s),
            _ => None,
        }
        .filter(|d| !d.is_zero())
    },
    secret: false,
};

/// `"500ms"`, `"30s"`, `"2m"`, `"1h"`, or a bare number of seconds.
pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let seconds_per_unit = match unit.trim() {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(number * seconds_per_unit).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("45"), Some(Duration::from_secs(45)));
        assert_eq!(parse_duration("30 parsecs"), None);
        assert_eq!(parse_duration("s"), None);
        assert_eq!(parse_duration("-1s"), None);
    }

    #[test]
    fn zero_is_refused() {
        assert_eq!((DURATION.parse)(&Node::Str("0s".into())), None);
        assert_eq!((DURATION.parse)(&Node::Int(0)), None);
        assert_eq!((DURATION.parse)(&Node::Int(5)), Some(Duration::from_secs(5)));
    }
}
