//! Times as the providers write them.

/// Unix seconds as `YYYY-MM-DDThh:mm:ssZ`.
pub(crate) fn rfc3339(seconds: u64) -> String {
    let time = aws_smithy_types::DateTime::from_secs(i64::try_from(seconds).unwrap_or(i64::MAX));
    time.fmt(aws_smithy_types::date_time::Format::DateTime).unwrap_or_default()
}
