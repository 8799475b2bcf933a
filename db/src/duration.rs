//! LiteLLM's budget periods (`budget_duration`): a number and a unit, `s`, `m`, `h`, `d`, `w` or
//! `mo` (calendar months), e.g. `30d`, `1mo`.

/// A budget period, as PostgreSQL's `interval` reads it (`30 days`, `1 months`).
pub fn to_interval(duration: &str) -> Option<String> {
    let (n, unit) = parts(duration)?;
    let unit = match unit {
        "s" => "seconds",
        "m" => "minutes",
        "h" => "hours",
        "d" => "days",
        "w" => "weeks",
        _ => "months",
    };
    Some(format!("{n} {unit}"))
}

/// A budget period in seconds; a month counts 30 days.
pub fn to_seconds(duration: &str) -> Option<u64> {
    let (n, unit) = parts(duration)?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => 30 * 86_400,
    };
    n.checked_mul(unit)
}

/// `30d` → (30, `d`), for a number above zero and one of LiteLLM's units.
fn parts(duration: &str) -> Option<(u64, &str)> {
    let text = duration.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    let n: u64 = number.parse().ok().filter(|n| *n > 0)?;
    let unit = unit.trim();
    ["s", "m", "h", "d", "w", "mo"].contains(&unit).then_some((n, unit))
}

#[cfg(test)]
mod tests {
    use super::{to_interval, to_seconds};

    #[test]
    fn seconds() {
        assert_eq!(to_seconds("1d"), Some(86_400));
        assert_eq!(to_seconds("2h"), Some(7200));
        assert_eq!(to_seconds("1mo"), Some(30 * 86_400));
        assert_eq!(to_seconds("0d"), None);
        assert_eq!(to_seconds("5y"), None);
    }

    #[test]
    fn litellm_units() {
        assert_eq!(to_interval("30d").as_deref(), Some("30 days"));
        assert_eq!(to_interval("1mo").as_deref(), Some("1 months"));
        assert_eq!(to_interval("15m").as_deref(), Some("15 minutes"));
        assert_eq!(to_interval("2w").as_deref(), Some("2 weeks"));
        assert_eq!(to_interval("0d"), None);
        assert_eq!(to_interval("d"), None);
        assert_eq!(to_interval("5y"), None);
    }
}
