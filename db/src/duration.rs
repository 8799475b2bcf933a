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

/// LiteLLM's words for periods (`hourly`, `daily`, `weekly`, `monthly`), as the periods they
/// stand for.
fn unalias(duration: &str) -> &str {
    match duration.trim().to_ascii_lowercase().as_str() {
        "hourly" => "1h",
        "daily" => "24h",
        "weekly" => "7d",
        "monthly" => "30d",
        _ => duration.trim(),
    }
}

/// Whether LiteLLM can reset a budget on this period: a number above zero and a unit, months
/// only one at a time (`get_next_standardized_reset_time`).
pub fn is_budget_period(duration: &str) -> bool {
    parts(duration).is_some_and(|(n, unit)| unit != "mo" || n == 1)
}

/// LiteLLM's next `budget_reset_at` for the budget period `duration` (an SQL text expression: a
/// parameter or a column), as an SQL expression of UTC time — `get_budget_reset_time` with its
/// default timezone (UTC) and time of day (midnight). Periods reset on the calendar, not from
/// now: `1d`/`daily` at the next midnight, `7d`/`1w`/`weekly` on next Monday, `30d`/`1mo`/
/// `monthly` on the first of next month, other days at midnight that many days on, and hours,
/// minutes and seconds at their next multiple within the day (`6h`: 00, 06, 12, 18).
pub fn next_reset_sql(duration: &str) -> String {
    next_reset_after_sql(duration, "now() AT TIME ZONE 'UTC'")
}

/// [`next_reset_sql`] after the UTC time `now` (an SQL timestamp expression).
pub fn next_reset_after_sql(duration: &str, now: &str) -> String {
    format!(
        "(SELECT CASE \
           WHEN u = 'd' AND v = 1 THEN day + interval '1 day' \
           WHEN u = 'd' AND v = 7 THEN date_trunc('week', t) + interval '7 days' \
           WHEN (u = 'd' AND v = 30) OR u = 'mo' THEN date_trunc('month', t) + make_interval(months => CASE u WHEN 'mo' THEN v ELSE 1 END) \
           WHEN u = 'd' THEN day + make_interval(days => v) \
           WHEN u = 'h' THEN day + make_interval(days => (nh >= 24)::int, hours => nh % 24) \
           WHEN u = 'm' THEN day + make_interval(days => (h + nm / 60 >= 24)::int, hours => (h + nm / 60) % 24, mins => nm % 60) \
           WHEN u = 's' THEN day + make_interval(days => (h + (mi + ns / 60) / 60 >= 24)::int, \
                hours => (h + (mi + ns / 60) / 60) % 24, mins => (mi + ns / 60) % 60, secs => ns % 60) \
         END FROM (SELECT t, day, u, v, h, mi, (h / v) * v + v AS nh, (mi / v) * v + v AS nm, (se / v) * v + v AS ns \
           FROM (SELECT t, date_trunc('day', t) AS day, CASE w.u WHEN 'w' THEN 'd' ELSE w.u END AS u, \
                   CASE w.u WHEN 'w' THEN 7 * w.v ELSE w.v END AS v, extract(hour FROM t)::int AS h, \
                   extract(minute FROM t)::int AS mi, floor(extract(second FROM t))::int AS se \
             FROM (SELECT ({now})::timestamp AS t, substring(x FROM '^([0-9]+)')::int AS v, \
                     substring(x FROM '^[0-9]+(mo|s|m|h|d|w)$') AS u \
               FROM (SELECT CASE lower(trim({duration})) WHEN 'hourly' THEN '1h' WHEN 'daily' THEN '24h' \
                       WHEN 'weekly' THEN '7d' WHEN 'monthly' THEN '30d' ELSE trim({duration}) END AS x) a) w) p) q)"
    )
}

/// `30d` → (30, `d`), for a number above zero and one of LiteLLM's units (or words).
fn parts(duration: &str) -> Option<(u64, &str)> {
    let text = unalias(duration);
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
