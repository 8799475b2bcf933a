//! LiteLLM's budget periods (`budget_duration`): a number and a unit, `s`, `m`, `h`, `d`, `w` or
//! `mo` (calendar months), e.g. `30d`, `1mo`.

/// A budget period, as PostgreSQL's `interval` reads it (`30 days`, `1 months`).
pub fn to_interval(duration: &str) -> Option<String> {
    let text = duration.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    let n: u64 = number.parse().ok().filter(|n| *n > 0)?;
    let unit = match unit.trim() {
        "s" => "seconds",
        "m" => "minutes",
        "h" => "hours",
        "d" => "days",
        "w" => "weeks",
        "mo" => "months",
        _ => return None,
    };
    Some(format!("{n} {unit}"))
}

#[cfg(test)]
mod tests {
    use super::to_interval;

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
