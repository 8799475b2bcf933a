//! The kinds of value the schema reads: each turns a (substituted) [`Node`] into a typed value or
//! refuses it, and names what it expects for the error message.
//!
//! Numbers and booleans are also accepted as strings (`"3"`, `"true"`), because a value that comes
//! from `os.environ/NAME` is always a string.

use std::time::Duration;

use crate::node::Node;

/// One kind of value: what an error says was expected, and the parser.
pub(crate) struct Kind<T> {
    /// Completes "expected …", e.g. "a positive integer".
    pub(crate) expected: &'static str,
    pub(crate) parse: fn(&Node) -> Option<T>,
    /// A secret's value is never repeated in an error, only its kind.
    pub(crate) secret: bool,
}

pub(crate) const STRING: Kind<String> =
    Kind { expected: "a string", parse: |n| string(n).map(str::to_string), secret: false };

pub(crate) const NON_EMPTY_STRING: Kind<String> = Kind {
    expected: "a non-empty string",
    parse: |n| string(n).filter(|s| !s.trim().is_empty()).map(str::to_string),
    secret: false,
};

/// An api key or the master key.
pub(crate) const SECRET: Kind<String> =
    Kind { expected: "a string", parse: |n| string(n).map(str::to_string), secret: true };

/// A deployment id: YAML readers write `id: 1` as often as `id: "1"`.
pub(crate) const ID: Kind<String> = Kind {
    expected: "a non-empty string",
    parse: |n| match n {
        Node::Int(i) => Some(i.to_string()),
        other => string(other).filter(|s| !s.trim().is_empty()).map(str::to_string),
    },
    secret: false,
};

pub(crate) const STRING_LIST: Kind<Vec<String>> = Kind {
    expected: "a list of strings",
    parse: |n| match n {
        Node::List(items) => items.iter().map(|i| string(i).map(str::to_string)).collect(),
        _ => None,
    },
    secret: false,
};

pub(crate) const BOOL: Kind<bool> = Kind {
    expected: "true or false",
    parse: |n| match n {
        Node::Bool(b) => Some(*b),
        // PyYAML's YAML 1.1 spellings, which the parser leaves as strings.
        Node::Str(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Some(true),
            "false" | "no" | "off" => Some(false),
            _ => None,
        },
        _ => None,
    },
    secret: false,
};

pub(crate) const POSITIVE_INT: Kind<u64> = Kind {
    expected: "a positive integer",
    parse: |n| integer(n).and_then(|i| u64::try_from(i).ok()).filter(|i| *i > 0),
    secret: false,
};

pub(crate) const NON_NEGATIVE_INT: Kind<u64> = Kind {
    expected: "a non-negative integer",
    parse: |n| integer(n).and_then(|i| u64::try_from(i).ok()),
    secret: false,
};

pub(crate) const POSITIVE_U32: Kind<u32> = Kind {
    expected: "a positive integer (at most 4294967295)",
    parse: |n| integer(n).and_then(|i| u32::try_from(i).ok()).filter(|i| *i > 0),
    secret: false,
};

pub(crate) const NON_NEGATIVE_U32: Kind<u32> = Kind {
    expected: "a non-negative integer (at most 4294967295)",
    parse: |n| integer(n).and_then(|i| u32::try_from(i).ok()),
    secret: false,
};

pub(crate) const POSITIVE_USIZE: Kind<usize> = Kind {
    expected: "a positive integer",
    parse: |n| integer(n).and_then(|i| usize::try_from(i).ok()).filter(|i| *i > 0),
    secret: false,
};

/// LiteLLM's timeouts: a number of seconds, fractions allowed.
pub(crate) const POSITIVE_SECONDS: Kind<Duration> = Kind {
    expected: "a number of seconds greater than 0",
    parse: |n| seconds(n).filter(|d| !d.is_zero()),
    secret: false,
};

/// LiteLLM's cooldowns: a number of seconds, 0 allowed.
pub(crate) const NON_NEGATIVE_SECONDS: Kind<Duration> =
    Kind { expected: "a number of seconds (0 or more)", parse: seconds, secret: false };

/// Prices per token, buffers: a finite number, 0 or more.
pub(crate) const NON_NEGATIVE_NUMBER: Kind<f64> = Kind {
    expected: "a number (0 or more)",
    parse: |n| number(n).filter(|x| x.is_finite() && *x >= 0.0),
    secret: false,
};

/// A score or cut-off: any finite number.
pub(crate) const FINITE_NUMBER: Kind<f64> =
    Kind { expected: "a number", parse: |n| number(n).filter(|x| x.is_finite()), secret: false };

/// The walk's windows and TTLs (seconds, fractions allowed), a price ceiling: a finite number
/// greater than 0.
pub(crate) const POSITIVE_NUMBER: Kind<f64> = Kind {
    expected: "a number greater than 0",
    parse: |n| number(n).filter(|x| x.is_finite() && *x > 0.0),
    secret: false,
};

/// Fits, completeness, bonuses: a number from 0 to 1.
pub(crate) const FRACTION: Kind<f64> =
    Kind { expected: "a number from 0 to 1", parse: |n| number(n).filter(|x| (0.0..=1.0).contains(x)), secret: false };

/// A region as the policy router compares them: lowercase words joined by dashes (`de-ber`,
/// `eu-central-1`, `de`, `eu`). Case and spaces matter to the comparison, so they are refused
/// rather than left to match nothing.
pub(crate) const REGION: Kind<String> = Kind {
    expected: "a region in lowercase, like de-ber, eu-central-1 or de",
    parse: |n| string(n).map(str::trim).filter(|s| is_region(s)).map(str::to_string),
    secret: false,
};

pub(crate) fn is_region(s: &str) -> bool {
    s.split('-').all(|word| !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

fn number(node: &Node) -> Option<f64> {
    match node {
        Node::Int(i) => Some(*i as f64),
        Node::Float(x) => Some(*x),
        Node::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn string(node: &Node) -> Option<&str> {
    match node {
        Node::Str(s) => Some(s),
        _ => None,
    }
}

fn integer(node: &Node) -> Option<i128> {
    match node {
        Node::Int(i) => Some(*i),
        Node::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn seconds(node: &Node) -> Option<Duration> {
    let secs = match node {
        Node::Int(i) => *i as f64,
        Node::Float(x) => *x,
        Node::Str(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    Duration::try_from_secs_f64(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Node {
        Node::Str(v.into())
    }

    #[test]
    fn integers_accept_numeric_strings_only_in_range() {
        assert_eq!((POSITIVE_INT.parse)(&Node::Int(3)), Some(3));
        assert_eq!((POSITIVE_INT.parse)(&s(" 7 ")), Some(7));
        assert_eq!((POSITIVE_INT.parse)(&Node::Int(0)), None);
        assert_eq!((POSITIVE_INT.parse)(&s("high")), None);
        assert_eq!((POSITIVE_INT.parse)(&Node::Float(1.5)), None);
        assert_eq!((NON_NEGATIVE_INT.parse)(&Node::Int(0)), Some(0));
        assert_eq!((NON_NEGATIVE_INT.parse)(&Node::Int(-1)), None);
        assert_eq!((POSITIVE_U32.parse)(&Node::Int(1 << 32)), None);
    }

    #[test]
    fn seconds_accept_fractions_but_not_negatives() {
        assert_eq!((POSITIVE_SECONDS.parse)(&Node::Float(0.5)), Some(Duration::from_millis(500)));
        assert_eq!((POSITIVE_SECONDS.parse)(&Node::Int(0)), None);
        assert_eq!((NON_NEGATIVE_SECONDS.parse)(&Node::Int(0)), Some(Duration::ZERO));
        assert_eq!((NON_NEGATIVE_SECONDS.parse)(&Node::Int(-5)), None);
        assert_eq!((NON_NEGATIVE_SECONDS.parse)(&s("30")), Some(Duration::from_secs(30)));
        assert_eq!((POSITIVE_SECONDS.parse)(&Node::Float(f64::INFINITY)), None);
    }

    #[test]
    fn numbers_accept_integers_fractions_and_numeric_strings() {
        assert_eq!((NON_NEGATIVE_NUMBER.parse)(&Node::Float(2.5e-6)), Some(2.5e-6));
        assert_eq!((NON_NEGATIVE_NUMBER.parse)(&Node::Int(0)), Some(0.0));
        assert_eq!((NON_NEGATIVE_NUMBER.parse)(&s("0.1")), Some(0.1));
        assert_eq!((NON_NEGATIVE_NUMBER.parse)(&Node::Float(-0.1)), None);
        assert_eq!((NON_NEGATIVE_NUMBER.parse)(&s("NaN")), None);
        assert_eq!((NON_NEGATIVE_NUMBER.parse)(&Node::Float(f64::INFINITY)), None);
        assert_eq!((NON_NEGATIVE_NUMBER.parse)(&Node::Bool(true)), None);
    }

    #[test]
    fn positive_numbers_refuse_zero_infinity_and_booleans() {
        assert_eq!((POSITIVE_NUMBER.parse)(&Node::Float(0.5)), Some(0.5));
        assert_eq!((POSITIVE_NUMBER.parse)(&Node::Int(300)), Some(300.0));
        assert_eq!((POSITIVE_NUMBER.parse)(&s("2.5")), Some(2.5));
        for bad in [Node::Int(0), Node::Float(-1.0), Node::Float(f64::INFINITY), Node::Bool(true), s("NaN")] {
            assert_eq!((POSITIVE_NUMBER.parse)(&bad), None, "{bad:?}");
        }
    }

    #[test]
    fn booleans_and_lists() {
        assert_eq!((BOOL.parse)(&s("True")), Some(true));
        assert_eq!((BOOL.parse)(&s("off")), Some(false));
        assert_eq!((BOOL.parse)(&s("y")), None);
        assert_eq!((BOOL.parse)(&Node::Int(1)), None);
        let list = Node::List(vec![s("a"), s("b")]);
        assert_eq!((STRING_LIST.parse)(&list), Some(vec!["a".into(), "b".into()]));
        assert_eq!((STRING_LIST.parse)(&Node::List(vec![Node::Int(1)])), None);
        assert_eq!((STRING_LIST.parse)(&Node::Map(vec![])), None);
    }

    #[test]
    fn fractions_and_regions() {
        assert_eq!((FRACTION.parse)(&Node::Int(1)), Some(1.0));
        assert_eq!((FRACTION.parse)(&Node::Float(0.25)), Some(0.25));
        assert_eq!((FRACTION.parse)(&Node::Float(1.5)), None);
        assert_eq!((FRACTION.parse)(&Node::Float(-0.1)), None);
        assert_eq!((FRACTION.parse)(&s("NaN")), None);
        assert_eq!((REGION.parse)(&s("de-ber")), Some("de-ber".into()));
        assert_eq!((REGION.parse)(&s("eu-central-1")), Some("eu-central-1".into()));
        for bad in ["DE-BER", "de ber", "de-", "", "eu_owned"] {
            assert_eq!((REGION.parse)(&s(bad)), None, "{bad}");
        }
    }

    #[test]
    fn ids_may_be_integers() {
        assert_eq!((ID.parse)(&Node::Int(7)), Some("7".into()));
        assert_eq!((ID.parse)(&s("")), None);
    }
}
