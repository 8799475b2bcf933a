//! Keys changed by a writer that does not notify (a LiteLLM proxy sharing the database changes
//! keys and spend without Pointwork's `pg_notify`): every `refresh_interval` the database
//! thread reads the keys it holds again, many to a query, and takes in what changed — a new
//! entry (the old one retired, so shards ask again) when the row's rules changed or the row is
//! gone, the accounts' spend set to the database's when only spend moved.
//!
//! Bounded: a refresh reads at most [`PER_REFRESH`] keys, [`BATCH`] to a query; with more keys
//! cached, the next refresh goes on where this one stopped (in digest order), so every key is
//! read again within `⌈keys / PER_REFRESH⌉` intervals.

use crate::account::KeyRecord;

/// At most this many tokens in one query.
pub(crate) const BATCH: usize = 1_000;
/// At most this many keys read again per refresh.
pub(crate) const PER_REFRESH: usize = 20_000;

/// Where the last refresh stopped: the last digest it read.
#[derive(Default)]
pub(crate) struct Cursor(Option<[u8; 32]>);

/// The keys this refresh reads: up to [`PER_REFRESH`] of `cached`, in digest order, from past
/// the cursor (starting over from the first once past the last).
pub(crate) fn next_round(cached: impl Iterator<Item = [u8; 32]>, cursor: &mut Cursor) -> Vec<[u8; 32]> {
    let mut all: Vec<[u8; 32]> = cached.collect();
    all.sort_unstable();
    let start = cursor.0.map_or(0, |last| all.partition_point(|d| *d <= last));
    let start = if start >= all.len() { 0 } else { start };
    let round: Vec<[u8; 32]> = all[start..].iter().chain(&all[..start]).take(PER_REFRESH).copied().collect();
    cursor.0 = round.last().copied();
    round
}

/// Whether a row read again holds the same rules as the one held (spend aside: the accounts
/// take it in place).
pub(crate) fn same_rules(held: &KeyRecord, read: &KeyRecord) -> bool {
    let spend = (held.spend, held.team_spend, held.user_spend);
    let read = KeyRecord { spend: spend.0, team_spend: spend.1, user_spend: spend.2, ..read.clone() };
    *held == read
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_go_on_where_the_last_stopped_and_wrap_around() {
        let keys = (0..(PER_REFRESH + 10) as u32).map(|i| {
            let mut d = [0u8; 32];
            d[..4].copy_from_slice(&i.to_be_bytes());
            d
        });
        let mut cursor = Cursor::default();
        let first = next_round(keys.clone(), &mut cursor);
        assert_eq!(first.len(), PER_REFRESH);
        let second = next_round(keys.clone(), &mut cursor);
        assert_eq!(second.len(), PER_REFRESH, "the 10 left, then from the first again");
        assert_eq!(second[0][..4], (PER_REFRESH as u32).to_be_bytes());
        assert_eq!(second[10], first[0]);
        let few = next_round([[1; 32], [2; 32]].into_iter(), &mut Cursor::default());
        assert_eq!(few, [[1; 32], [2; 32]]);
        assert!(next_round(std::iter::empty(), &mut cursor).is_empty());
    }

    #[test]
    fn spend_alone_is_not_a_change_of_rules() {
        let held = KeyRecord { token: "t".into(), spend: 1.0, max_budget: Some(5.0), ..KeyRecord::default() };
        let spent = KeyRecord { spend: 2.0, team_spend: 3.0, ..held.clone() };
        assert!(same_rules(&held, &spent));
        let blocked = KeyRecord { blocked: true, ..held.clone() };
        assert!(!same_rules(&held, &blocked));
    }
}
