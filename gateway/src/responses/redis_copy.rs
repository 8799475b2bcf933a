//! The kept conversations shared through Redis, when the cluster is configured: every kept
//! response is also written to Redis (`{key_prefix}:responses:{id}`, for as long as it is kept),
//! and a response is looked for there first, so that any instance continues, retrieves or
//! deletes a conversation another instance answered. A thread of its own talks to Redis; a
//! request waits at most [`LOOKUP_TIMEOUT`] for its answer. With Redis out of reach, an instance
//! answers from what it keeps itself.

use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, TrySendError};
use futures_channel::oneshot;

use super::conversations::TTL;
use crate::cluster::redis_link;

/// How long a request waits for Redis's answer before it uses the instance's own copy.
const LOOKUP_TIMEOUT: Duration = Duration::from_millis(250);
/// Writes that may wait for the thread; beyond that they are dropped (the instance keeps its
/// own copy).
const QUEUE: usize = 4096;

/// What Redis said of a response id.
pub(crate) enum Lookup {
    Found(Vec<u8>),
    Missing,
    /// Redis did not answer in time, or is out of reach.
    Unknown,
}

enum Job {
    Put { id: String, value: Vec<u8> },
    Delete { id: String },
    Get { id: String, reply: oneshot::Sender<Lookup> },
}

/// The way to the thread that keeps the conversations in Redis.
pub(crate) struct RedisCopy {
    jobs: Sender<Job>,
}

impl RedisCopy {
    /// Starts the thread, with `client`'s Redis and keys under `key_prefix`.
    pub(crate) fn start(client: redis::Client, key_prefix: &str) -> std::io::Result<RedisCopy> {
        let (jobs, queue) = crossbeam_channel::bounded(QUEUE);
        let prefix = format!("{key_prefix}:responses:");
        std::thread::Builder::new().name("responses-redis".into()).spawn(move || run(&client, &prefix, &queue))?;
        Ok(RedisCopy { jobs })
    }

    pub(crate) fn put(&self, id: &str, value: Vec<u8>) {
        self.send(Job::Put { id: id.to_string(), value });
    }

    pub(crate) fn delete(&self, id: &str) {
        self.send(Job::Delete { id: id.to_string() });
    }

    pub(crate) async fn get(&self, id: &str) -> Lookup {
        let (reply, answer) = oneshot::channel();
        if self.jobs.try_send(Job::Get { id: id.to_string(), reply }).is_err() {
            return Lookup::Unknown;
        }
        match monoio::time::timeout(LOOKUP_TIMEOUT, answer).await {
            Ok(Ok(lookup)) => lookup,
            _ => Lookup::Unknown,
        }
    }

    fn send(&self, job: Job) {
        if let Err(TrySendError::Disconnected(_)) = self.jobs.try_send(job) {
            redis_link::log("the Responses API's Redis thread has stopped");
        }
    }
}

fn run(client: &redis::Client, prefix: &str, queue: &Receiver<Job>) {
    let mut con: Option<redis::Connection> = None;
    for job in queue {
        if con.is_none() {
            con = redis_link::connect(client).ok();
        }
        let Some(c) = con.as_mut() else {
            if let Job::Get { reply, .. } = job {
                let _ = reply.send(Lookup::Unknown);
            }
            continue;
        };
        let done = match job {
            Job::Put { id, value } => {
                redis::cmd("SET").arg(format!("{prefix}{id}")).arg(value).arg("EX").arg(TTL.as_secs()).exec(c)
            }
            Job::Delete { id } => redis::cmd("DEL").arg(format!("{prefix}{id}")).exec(c),
            Job::Get { id, reply } => {
                let got: redis::RedisResult<Option<Vec<u8>>> = redis::cmd("GET").arg(format!("{prefix}{id}")).query(c);
                let lookup = match &got {
                    Ok(Some(value)) => Lookup::Found(value.clone()),
                    Ok(None) => Lookup::Missing,
                    Err(_) => Lookup::Unknown,
                };
                let _ = reply.send(lookup);
                got.map(drop)
            }
        };
        if done.is_err() {
            con = None; // reconnected at the next job
        }
    }
}
