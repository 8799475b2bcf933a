//! The live view's admin actions on a deployment (`POST /admin/deployments/{id}/{action}`):
//! block and unblock it at run time (LiteLLM's `model_info.blocked`), and end its cooldown.
//! Each is logged with the admin who asked.
//!
//! A block is not a request-path check: the control thread lays the admins' word over the
//! config's `model_info.blocked` and publishes new routes ([`ControlMsg::SetBlocked`]), as a
//! reload does, so the blocked filter and the snapshot's member sets read it as they read the
//! config's. Ending a cooldown is an event every shard applies (and every instance, with the
//! cluster over Redis), like an endpoint status an operator sets.

use std::time::Instant;

use pointwork_core::Event;
use serde_json::json;

use crate::errors::openai_error;
use crate::hub::ControlMsg;
use crate::keys::Caller;
use crate::respond::Reply;
use crate::server::admin::percent_decode;
use crate::shard::Shard;

/// What an admin asked of a deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Block,
    Unblock,
    EndCooldown,
}

/// The deployment id (percent-encoded, as sent) and the action of `{id}/{action}`; `None`
/// for an action there is not. The action is matched at the end, so an id may hold `/`
/// encoded or not.
fn parse(rest: &str) -> Option<(&str, Action)> {
    let actions = [("/block", Action::Block), ("/unblock", Action::Unblock), ("/cooldown/end", Action::EndCooldown)];
    let rest = rest.split_once('?').map_or(rest, |(path, _)| path);
    actions.iter().find_map(|&(suffix, action)| {
        let id = rest.strip_suffix(suffix)?;
        (!id.is_empty()).then_some((id, action))
    })
}

/// Serves `POST /admin/deployments/{rest}` for an admin `caller`.
pub(crate) async fn serve(shard: &Shard, caller: &Caller, rest: &str, _body: &[u8]) -> Reply {
    let error = |status: u16, message: &str| Reply::json(status, openai_error(status, message, None));
    let Some((raw_id, action)) = parse(rest) else {
        return error(
            400,
            &format!(
                "no action {rest:?}: POST /admin/deployments/{{id}}/block, /unblock or /cooldown/end \
                 (an id holding / is percent-encoded)"
            ),
        );
    };
    let Some(id) = percent_decode(raw_id) else {
        return error(400, "the deployment id in the path is not valid percent-encoded UTF-8");
    };
    if shard.hub.routes.load().snapshot.deployment_by_id(&id).is_none() {
        return error(404, &format!("no deployment with id {id:?}"));
    }
    let admin = caller.name().unwrap_or("anyone");
    match action {
        Action::Block | Action::Unblock => set_blocked(shard, &id, action == Action::Block, admin).await,
        Action::EndCooldown => end_cooldown(shard, &id, admin),
    }
}

/// Asks the control thread to publish routes with `id` blocked or not, and answers once they
/// are published (the next request on any shard reads them).
async fn set_blocked(shard: &Shard, id: &str, blocked: bool, admin: &str) -> Reply {
    let (tx, rx) = futures_channel::oneshot::channel();
    let asked = ControlMsg::SetBlocked { id: id.to_string(), blocked, reply: tx };
    if shard.hub.control.send(asked).is_err() {
        return Reply::json(503, openai_error(503, "the control thread is gone; cannot change the routes", None));
    }
    match rx.await {
        Ok(Ok(())) => {
            let word = if blocked { "blocked" } else { "unblocked" };
            eprintln!("pointwork: deployment {id} {word} by admin {admin}");
            let by = blocked.then_some("admin");
            Reply::json(200, json!({"id": id, "blocked": blocked, "blocked_by": by}).to_string().into_bytes())
        }
        Ok(Err(e)) => Reply::json(500, openai_error(500, &format!("the routes could not be rebuilt: {e}"), None)),
        Err(_) => Reply::json(503, openai_error(503, "the control thread ended before the routes were rebuilt", None)),
    }
}

/// Ends `id`'s cooldown in this shard's state and tells the other shards (and, with the
/// cluster, the other instances) to end it too.
fn end_cooldown(shard: &Shard, id: &str, admin: &str) -> Reply {
    let routes = shard.sync();
    let Some(idx) = routes.snapshot.deployment_by_id(id) else {
        return Reply::json(404, openai_error(404, &format!("deployment {id:?} is gone after a reload"), None));
    };
    let now = Instant::now();
    let was =
        shard.record(&routes, idx, |state, _, i| (state.end_cooldown(i, now), Some(Event::CooldownEnded { idx: i })));
    let Some(was_cooling_down) = was else {
        return Reply::json(404, openai_error(404, &format!("deployment {id:?} is gone after a reload"), None));
    };
    let what = if was_cooling_down { "cooldown ended" } else { "cooldown ended (it was not cooling down)" };
    eprintln!("pointwork: deployment {id} {what} by admin {admin}");
    Reply::json(200, json!({"id": id, "was_cooling_down": was_cooling_down}).to_string().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::admin_blocks::AdminBlocks;

    #[test]
    fn the_action_is_read_from_the_end_and_the_id_is_the_rest() {
        assert_eq!(parse("a/block"), Some(("a", Action::Block)));
        assert_eq!(parse("a/unblock"), Some(("a", Action::Unblock)));
        assert_eq!(parse("a%2Fb/cooldown/end"), Some(("a%2Fb", Action::EndCooldown)));
        assert_eq!(parse("openai/gpt-4o/block"), Some(("openai/gpt-4o", Action::Block)));
        assert_eq!(parse("a/block?x=1"), Some(("a", Action::Block)));
        for bad in ["a", "a/", "/block", "a/pause", "a/cooldown", "a/cooldown/start", "a/block/now", ""] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_admins_word_is_laid_over_the_config_and_can_be_taken_back() {
        let blocks = AdminBlocks::default();
        assert_eq!(blocks.set("a", true), None);
        assert_eq!(blocks.set("b", false), None);
        assert_eq!(blocks.get("a"), Some(true));
        assert_eq!(blocks.get("c"), None);
        assert_eq!(blocks.listed().into_iter().collect::<Vec<_>>(), [("a".into(), true), ("b".into(), false)]);
        let before = blocks.set("a", false);
        blocks.restore("a", before);
        assert_eq!(blocks.get("a"), Some(true));
        blocks.restore("b", None);
        assert_eq!(blocks.get("b"), None);
    }
}
