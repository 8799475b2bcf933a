//! When a certificate expires: its `notAfter`, read by walking just enough of its DER
//! (RFC 5280 §4.1) — `Certificate → tbsCertificate → validity → notAfter` — to avoid an X.509
//! parser for one field. rustls parses and checks the certificate itself.

use std::time::{SystemTime, UNIX_EPOCH};

const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;
/// `[0] EXPLICIT Version`, absent from v1 certificates.
const VERSION: u8 = 0xa0;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;

/// The certificate's `notAfter`, in seconds since the Unix epoch.
pub fn not_after(cert_der: &[u8]) -> Result<i64, String> {
    walk_to_not_after(cert_der).map_err(|what| format!("the certificate cannot be read: {what}"))
}

fn walk_to_not_after(cert_der: &[u8]) -> Result<i64, &'static str> {
    let (certificate, _) = expect(cert_der, SEQUENCE)?;
    let (tbs, _) = expect(certificate, SEQUENCE)?;
    let mut rest = tbs;
    if rest.first() == Some(&VERSION) {
        rest = tlv(rest)?.2;
    }
    let (_serial, rest) = expect(rest, INTEGER)?;
    let (_signature, rest) = expect(rest, SEQUENCE)?;
    let (_issuer, rest) = expect(rest, SEQUENCE)?;
    let (validity, _) = expect(rest, SEQUENCE)?;
    let (_, _not_before, rest) = tlv(validity)?;
    let (tag, not_after, _) = tlv(rest)?;
    parse_time(tag, not_after).ok_or("its notAfter is not a valid UTCTime or GeneralizedTime")
}

/// Seconds from `now` until the certificate expires; negative once it has.
pub fn seconds_until_expiry(cert_der: &[u8], now: SystemTime) -> Result<i64, String> {
    Ok(not_after(cert_der)? - unix_seconds(now))
}

/// `now` in whole seconds since the Unix epoch (negative before it).
pub fn unix_seconds(now: SystemTime) -> i64 {
    match now.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// One DER element: its tag, its contents and what follows it.
pub(super) fn tlv(input: &[u8]) -> Result<(u8, &[u8], &[u8]), &'static str> {
    const TRUNCATED: &str = "truncated";
    let (&tag, rest) = input.split_first().ok_or(TRUNCATED)?;
    let (&first, rest) = rest.split_first().ok_or(TRUNCATED)?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        // Long form: the low bits count the length's bytes (DER: at most what a usize holds).
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 {
            return Err("unsupported length");
        }
        let (bytes, rest) = rest.split_at_checked(count).ok_or(TRUNCATED)?;
        (bytes.iter().fold(0usize, |len, &b| (len << 8) | usize::from(b)), rest)
    };
    let (contents, rest) = rest.split_at_checked(len).ok_or(TRUNCATED)?;
    Ok((tag, contents, rest))
}

/// The element's contents and what follows, when its tag is `tag`.
fn expect(input: &[u8], tag: u8) -> Result<(&[u8], &[u8]), &'static str> {
    match tlv(input)? {
        (t, contents, rest) if t == tag => Ok((contents, rest)),
        _ => Err("unexpected structure"),
    }
}

/// `YYMMDDHHMMSSZ` (UTCTime: 50–99 are 19xx, RFC 5280 §4.1.2.5.1) or `YYYYMMDDHHMMSSZ`
/// (GeneralizedTime), as RFC 5280 requires them: in UTC, with seconds, no fractions.
fn parse_time(tag: u8, text: &[u8]) -> Option<i64> {
    let (year, rest) = match tag {
        UTC_TIME if text.len() == 13 => {
            let yy = digits(&text[..2])?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, &text[2..])
        }
        GENERALIZED_TIME if text.len() == 15 => (digits(&text[..4])?, &text[4..]),
        _ => return None,
    };
    if rest[10] != b'Z' {
        return None;
    }
    let [month, day, hour, minute, second] = [0, 2, 4, 6, 8].map(|i| digits(&rest[i..i + 2]));
    let (month, day, hour, minute, second) = (month?, day?, hour?, minute?, second?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second)
}

fn digits(text: &[u8]) -> Option<i64> {
    text.iter().try_fold(0, |n, &b| b.is_ascii_digit().then(|| n * 10 + i64::from(b - b'0')))
}

/// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar (Howard
/// Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2030, 1, 1) * 86_400, 1_893_456_000);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        // 2100 is not a leap year, 2000 was.
        assert_eq!(days_from_civil(2100, 3, 1) - days_from_civil(2100, 2, 28), 1);
        assert_eq!(days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28), 2);
    }

    #[test]
    fn utc_and_generalized_times() {
        assert_eq!(parse_time(UTC_TIME, b"300101000000Z"), Some(1_893_456_000));
        assert_eq!(parse_time(UTC_TIME, b"491231235959Z"), Some(days_from_civil(2050, 1, 1) * 86_400 - 1));
        assert_eq!(parse_time(UTC_TIME, b"500101000000Z"), Some(days_from_civil(1950, 1, 1) * 86_400));
        assert_eq!(parse_time(GENERALIZED_TIME, b"21261108131304Z"), Some(4_949_817_184));
        for bad in [&b"3001010000Z"[..], b"300101000000+", b"301301000000Z", b"30010100000aZ", b"300101240000Z"] {
            assert_eq!(parse_time(UTC_TIME, bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse_time(GENERALIZED_TIME, b"20300101000000.5Z"), None);
        assert_eq!(parse_time(INTEGER, b"300101000000Z"), None);
    }

    #[test]
    fn lengths_short_long_and_truncated() {
        assert_eq!(tlv(&[0x02, 0x01, 0x07, 0xff]), Ok((0x02, &[0x07][..], &[0xff][..])));
        let long: Vec<u8> = [0x04, 0x81, 0x80].into_iter().chain([0u8; 0x80]).collect();
        assert_eq!(tlv(&long).map(|(_, c, r)| (c.len(), r.len())), Ok((0x80, 0)));
        assert_eq!(tlv(&[0x30, 0x05, 0x00]), Err("truncated"));
        assert_eq!(tlv(&[0x30]), Err("truncated"));
        assert_eq!(tlv(&[0x30, 0x80]), Err("unsupported length"));
    }

    #[test]
    fn not_a_certificate_is_an_error() {
        assert!(not_after(b"").unwrap_err().starts_with("the certificate cannot be read"));
        assert!(not_after(&[0x30, 0x03, 0x02, 0x01, 0x01]).is_err());
    }

    #[test]
    fn seconds_before_the_epoch() {
        assert_eq!(unix_seconds(UNIX_EPOCH - std::time::Duration::from_secs(5)), -5);
        assert_eq!(unix_seconds(UNIX_EPOCH + std::time::Duration::from_millis(5_999)), 5);
    }
}
