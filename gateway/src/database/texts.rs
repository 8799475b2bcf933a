//! LiteLLM's words and numbers, where its clients read them: Python's float and datetime
//! formatting.

use crate::access_log::civil_from_days;

/// A float as Python's `str()` writes it: the shortest digits that read back the same, `1.0`,
/// `0.0012`, `25.5` — and `1e-06`, `1.5e+16` past Python's bounds for plain digits (a decimal
/// point more than four places before the first digit, or more than sixteen after it).
pub(crate) fn py_float(value: f64) -> String {
    if !value.is_finite() {
        return if value.is_nan() {
            "nan".into()
        } else if value > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if value != 0.0 && !(-4..16).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exponent.abs());
    }
    let plain = format!("{value}");
    if plain.contains('.') {
        plain
    } else {
        plain + ".0"
    }
}

/// Unix seconds as Python's `str()` of an aware UTC datetime: `2026-12-06 07:40:12.123456+00:00`
/// (no fraction when it is whole).
pub(crate) fn py_datetime(unix: f64) -> String {
    let secs = unix.floor() as i64;
    let micros = ((unix - secs as f64) * 1_000_000.0).round() as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (rest / 3600, rest % 3600 / 60, rest % 60);
    let fraction = if micros > 0 { format!(".{micros:06}") } else { String::new() };
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}{fraction}+00:00")
}

/// Unix seconds as `2026-12-06 07:41:00 UTC` (LiteLLM's rate limiter's reset time).
pub(crate) fn utc_minute(unix: u64) -> String {
    let (y, m, d) = civil_from_days((unix / 86_400) as i64);
    let rest = unix % 86_400;
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_formats() {
        assert_eq!(py_float(1.0), "1.0");
        assert_eq!(py_float(0.0012), "0.0012");
        assert_eq!(py_float(25.5), "25.5");
        assert_eq!(py_datetime(1_704_067_200.0), "2024-01-01 00:00:00+00:00");
        assert_eq!(py_datetime(1_704_067_200.25), "2024-01-01 00:00:00.250000+00:00");
        assert_eq!(utc_minute(1_704_067_260), "2024-01-01 00:01:00 UTC");
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }
}

#[cfg(test)]
mod float_tests {
    use super::py_float;

    #[test]
    fn floats_read_as_pythons_str() {
        // Each pair as `python3 -c 'print(str(x))'` prints it.
        for (value, python) in [
            (1.0, "1.0"),
            (0.0, "0.0"),
            (25.5, "25.5"),
            (0.0012, "0.0012"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e-6, "1e-06"),
            (1.5e-7, "1.5e-07"),
            (0.06, "0.06"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (-2.5e-5, "-2.5e-05"),
        ] {
            assert_eq!(py_float(value), python, "{value:?}");
        }
    }
}
