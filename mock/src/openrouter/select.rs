//! Which provider serves an OpenRouter chat: the request's `provider` preferences (`only`,
//! `order`, `ignore`) against the model's telemetry and the account's allowed providers. Pure;
//! the caller reads the files and holds the control lock.

use serde_json::Value;

use crate::openrouter::control::{is_plain_slug, organisation, Control};
use crate::openrouter::telemetry::StatsRow;

/// The slug that serves when the model has no telemetry and nothing was asked for.
pub(crate) const DEFAULT_PROVIDER: &str = "openrouter-default";

/// The `provider` block's fields the emulation reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Preferences {
    /// `only`: endpoint slugs (`novita/fp8`) or organisations (`novita`); `None` when absent,
    /// null or empty.
    pub only: Option<Vec<String>>,
    pub order: Vec<String>,
    pub ignore: Vec<String>,
}

impl Preferences {
    /// Reads the request's `provider` value (absent or null: no preferences).
    pub(crate) fn read(block: Option<&Value>) -> Result<Preferences, String> {
        let fields = match block {
            None | Some(Value::Null) => return Ok(Preferences::default()),
            Some(Value::Object(fields)) => fields,
            Some(_) => return Err("provider must be an object".to_owned()),
        };
        let list = |key: &str| -> Result<Vec<String>, String> {
            match fields.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned))
                    .collect::<Option<Vec<String>>>()
                    .ok_or_else(|| format!("provider.{key} must be a list of strings")),
                Some(_) => Err(format!("provider.{key} must be a list of strings")),
            }
        };
        let only = list("only")?;
        Ok(Preferences { only: (!only.is_empty()).then_some(only), order: list("order")?, ignore: list("ignore")? })
    }
}

/// Where a chat goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selection {
    Serve(StatsRow),
    /// The account's allowed providers permit none of the candidates: OpenRouter's account 404.
    /// `serving`: the organisations serving the model.
    Account {
        serving: Vec<String>,
    },
    /// No `provider.only` entry serves the model: OpenRouter's request 404.
    Request {
        serving: Vec<String>,
        requested: Vec<String>,
    },
    /// Telemetry lists no usable endpoint.
    NoEndpoints,
}

/// `entry` (a slug or an organisation) names the endpoint `slug`.
fn names(entry: &str, slug: &str) -> bool {
    entry.eq_ignore_ascii_case(slug) || entry.eq_ignore_ascii_case(organisation(slug))
}

/// A row for a provider known only by name (no telemetry).
fn bare(slug: &str) -> StatsRow {
    StatsRow { slug: slug.to_owned(), name: slug.to_owned() }
}

/// The organisations of `slugs`, each once, in order.
fn organisations<'a>(slugs: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for slug in slugs {
        let organisation = organisation(slug);
        if !found.iter().any(|seen| seen == organisation) {
            found.push(organisation.to_owned());
        }
    }
    found
}

/// The provider for a chat: with `provider.only`, the first entry (in the request's order) that
/// the account allows and telemetry lists (an organisation entry stands for its endpoints in
/// file order; without telemetry every entry counts as listed); without it, telemetry's
/// endpoints with `order`'s first, the first the account allows. `ignore` drops endpoints.
/// Without telemetry and `only`: the first of `order`, the account's list, or
/// [`DEFAULT_PROVIDER`].
pub(crate) fn select(rows: Option<&[StatsRow]>, preferences: &Preferences, control: &Control) -> Selection {
    let ignored = |slug: &str| preferences.ignore.iter().any(|entry| names(entry, slug));
    let serving = |fallback: &[String]| match rows {
        Some(rows) => organisations(rows.iter().map(|row| row.slug.as_str())),
        None => organisations(fallback.iter().map(String::as_str)),
    };
    if let Some(only) = &preferences.only {
        let permitted: Vec<&String> = only.iter().filter(|entry| control.allows(entry)).collect();
        if permitted.is_empty() && control.allowed_providers.is_some() {
            return Selection::Account { serving: serving(only) };
        }
        let candidates: Vec<StatsRow> = match rows {
            Some(rows) => {
                permitted.iter().flat_map(|entry| rows.iter().filter(|row| names(entry, &row.slug))).cloned().collect()
            }
            None => permitted.iter().map(|entry| bare(entry)).collect(),
        };
        return candidates
            .into_iter()
            .find(|row| is_plain_slug(&row.slug) && !ignored(&row.slug) && control.allows(&row.slug))
            .map_or_else(|| Selection::Request { serving: serving(only), requested: only.clone() }, Selection::Serve);
    }
    let Some(rows) = rows else {
        let usable = |slug: &&String| is_plain_slug(slug) && !ignored(slug) && control.allows(slug);
        let chosen = preferences.order.iter().find(usable).or(control.allowed_providers.iter().flatten().next());
        return Selection::Serve(bare(chosen.map_or(DEFAULT_PROVIDER, String::as_str)));
    };
    let ordered = preferences
        .order
        .iter()
        .flat_map(|entry| rows.iter().filter(move |row| names(entry, &row.slug)))
        .chain(rows.iter());
    let usable: Vec<&StatsRow> = ordered.filter(|row| is_plain_slug(&row.slug) && !ignored(&row.slug)).collect();
    if usable.is_empty() {
        return Selection::NoEndpoints;
    }
    usable
        .into_iter()
        .find(|row| control.allows(&row.slug))
        .map_or_else(|| Selection::Account { serving: serving(&[]) }, |row| Selection::Serve(row.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openrouter::control::apply_account;
    use serde_json::json;

    fn rows() -> Vec<StatsRow> {
        ["z-ai/fp8", "novita/fp8", "baseten/fp8", "baseten/fp8-fast", "deepinfra/fp4", "together"]
            .iter()
            .map(|slug| StatsRow { slug: (*slug).to_owned(), name: format!("{slug} name") })
            .collect()
    }

    fn preferences(block: serde_json::Value) -> Preferences {
        Preferences::read(Some(&block)).expect("valid provider block")
    }

    fn served(selection: Selection) -> String {
        match selection {
            Selection::Serve(row) => row.slug,
            other => panic!("expected a provider, got {other:?}"),
        }
    }

    fn account(list: &[&str]) -> Control {
        let mut control = Control::default();
        apply_account(&mut control, json!({ "allowed_providers": list }).to_string().as_bytes()).expect("valid");
        control
    }

    #[test]
    fn reads_the_provider_block() {
        let read = preferences(json!({"only": ["novita/fp8"], "zdr": true, "allow_fallbacks": false}));
        assert_eq!(read.only, Some(vec!["novita/fp8".to_owned()]));
        assert_eq!(preferences(json!({"only": []})).only, None);
        assert_eq!(Preferences::read(None), Ok(Preferences::default()));
        assert_eq!(Preferences::read(Some(&json!(null))), Ok(Preferences::default()));
        for bad in [json!("novita"), json!({"only": "novita"}), json!({"only": [1]}), json!({"ignore": {}})] {
            assert!(Preferences::read(Some(&bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_first_listed_only_entry_serves() {
        let rows = rows();
        let control = Control::default();
        let pick = |block| served(select(Some(&rows), &preferences(block), &control));
        assert_eq!(pick(json!({"only": ["baseten/fp8", "novita/fp8"]})), "baseten/fp8");
        assert_eq!(pick(json!({"only": ["nowhere/fp8", "novita/fp8"]})), "novita/fp8");
        assert_eq!(pick(json!({"only": ["baseten"]})), "baseten/fp8", "an organisation: its first endpoint");
        assert_eq!(pick(json!({"only": ["baseten"], "ignore": ["baseten/fp8"]})), "baseten/fp8-fast");
        assert_eq!(pick(json!({"only": ["together"]})), "together");
    }

    #[test]
    fn without_only_telemetry_order_and_the_order_preference_decide() {
        let rows = rows();
        let control = Control::default();
        let pick = |block| served(select(Some(&rows), &preferences(block), &control));
        assert_eq!(pick(json!(null)), "z-ai/fp8");
        assert_eq!(pick(json!({"order": ["deepinfra"]})), "deepinfra/fp4");
        assert_eq!(pick(json!({"ignore": ["z-ai"]})), "novita/fp8");
        assert_eq!(select(Some(&[]), &Preferences::default(), &control), Selection::NoEndpoints);
    }

    #[test]
    fn without_telemetry_the_request_or_the_default_decides() {
        let control = Control::default();
        let pick = |block| served(select(None, &preferences(block), &control));
        assert_eq!(pick(json!(null)), DEFAULT_PROVIDER);
        assert_eq!(pick(json!({"only": ["anything/fp8"]})), "anything/fp8");
        assert_eq!(pick(json!({"order": ["novita"]})), "novita");
        assert_eq!(served(select(None, &Preferences::default(), &account(&["deepinfra"]))), "deepinfra");
    }

    #[test]
    fn only_entries_that_serve_nothing_are_a_request_refusal() {
        let rows = rows();
        let selection = select(Some(&rows), &preferences(json!({"only": ["nowhere/fp8"]})), &Control::default());
        let Selection::Request { serving, requested } = selection else { panic!("{selection:?}") };
        assert_eq!(serving, ["z-ai", "novita", "baseten", "deepinfra", "together"]);
        assert_eq!(requested, ["nowhere/fp8"]);
    }

    #[test]
    fn the_account_list_filters_and_refuses() {
        let rows = rows();
        let control = account(&["novita", "deepinfra"]);
        let pick = |block| select(Some(&rows), &preferences(block), &control);
        assert_eq!(served(pick(json!({"only": ["baseten/fp8", "deepinfra/fp4"]}))), "deepinfra/fp4");
        assert_eq!(served(pick(json!(null))), "novita/fp8");
        let Selection::Account { serving } = pick(json!({"only": ["baseten/fp8"]})) else { panic!("account 404") };
        assert_eq!(serving, ["z-ai", "novita", "baseten", "deepinfra", "together"]);
        let only_baseten = account(&["baseten"]);
        let outside = [rows[0].clone(), rows[1].clone()];
        assert_eq!(
            select(Some(&outside), &Preferences::default(), &only_baseten),
            Selection::Account { serving: vec!["z-ai".to_owned(), "novita".to_owned()] }
        );
        assert_eq!(
            select(None, &preferences(json!({"only": ["z-ai/fp8"]})), &only_baseten),
            Selection::Account { serving: vec!["z-ai".to_owned()] }
        );
    }
}
