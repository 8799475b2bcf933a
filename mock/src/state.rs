//! What all threads of one mock server share.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use arc_swap::ArcSwap;

use crate::azure::token::Entra;
use crate::bedrock::auth::AwsCredentials;
use crate::control::{apply_control, ControlChange};
use crate::fault::nth_request_is_faulted;
use crate::openai::body::AnswerText;
use crate::openrouter::router::OpenRouter;
use crate::options::{Behaviour, MockOptions};
use crate::record::{Recorder, Stats};
use crate::responses::store::ResponseStore;
use crate::vertex::token::GoogleAuth;

#[derive(Debug)]
pub(crate) struct Shared {
    pub name: String,
    pub text: AnswerText,
    behaviour: ArcSwap<Behaviour>,
    /// Serialises control requests so two of them cannot lose each other's fields.
    control: Mutex<()>,
    /// Requests seen since the fault was last configured, for `fault_ratio`.
    fault_sequence: AtomicU64,
    /// `None` when recording is off.
    pub recorder: Option<Recorder>,
    pub stats: Stats,
    pub context_window: Option<u64>,
    pub refuse: Option<String>,
    pub openrouter: OpenRouter,
    /// `--azure-api-key`: the only `api-key` the Azure routes accept (else any non-empty one).
    pub azure_api_key: Option<String>,
    /// `--azure-deployments`: the deployments that exist (else every name does).
    pub azure_deployments: Option<Vec<String>>,
    /// The Entra token endpoint and the tokens it issued.
    pub entra: Entra,
    /// `--aws-*`: what Bedrock's SigV4 check knows of the caller.
    pub aws: AwsCredentials,
    /// `--bedrock-models`: the model ids that exist (else every id does).
    pub bedrock_models: Option<Vec<String>>,
    /// `--gemini-api-key`: the only key the Gemini API routes accept (else any non-empty one).
    pub gemini_api_key: Option<String>,
    /// `--vertex-project`: the only project in Vertex AI's paths (else any).
    pub vertex_project: Option<String>,
    /// Google's token endpoint, its service account (loaded by `spawn`) and the tokens it issued.
    pub google: GoogleAuth,
    /// `--agent`: answer coding agents' tool loops (see [`agent`](crate::agent)).
    pub agent: bool,
    /// `--agent-tool`: the tool agent mode calls first when offered.
    pub agent_tool: Option<String>,
    /// `--no-responses` turns it off: `/v1/responses` answers 404.
    pub serve_responses: bool,
    /// The answers of `/v1/responses` kept for `previous_response_id` and `GET`.
    pub responses: ResponseStore,
}

impl Shared {
    pub(crate) fn new(options: &MockOptions) -> Self {
        Shared {
            name: options.name.clone(),
            text: AnswerText::new(&options.name),
            behaviour: ArcSwap::from_pointee(options.behaviour()),
            control: Mutex::new(()),
            fault_sequence: AtomicU64::new(0),
            recorder: options.record.then(|| Recorder::new(options.record_limit)),
            stats: Stats::default(),
            context_window: options.context_window,
            refuse: options.refuse.clone(),
            openrouter: OpenRouter::new(options),
            azure_api_key: options.azure_api_key.clone(),
            azure_deployments: options.azure_deployments.clone(),
            entra: Entra::new(options.azure_token_ttl_secs, options.azure_client_secret.clone()),
            aws: AwsCredentials {
                access_key_id: options.aws_access_key_id.clone(),
                secret_access_key: options.aws_secret_access_key.clone(),
                session_token: options.aws_session_token.clone(),
                region: options.aws_region.clone(),
            },
            bedrock_models: options.bedrock_models.clone(),
            gemini_api_key: options.gemini_api_key.clone(),
            vertex_project: options.vertex_project.clone(),
            google: GoogleAuth::new(options.vertex_token_ttl_secs),
            agent: options.agent,
            agent_tool: options.agent_tool.clone(),
            serve_responses: options.serve_responses,
            responses: ResponseStore::new(options.responses_limit),
        }
    }

    /// The current behaviour, copied out so no guard is held across an await.
    pub(crate) fn behaviour(&self) -> Behaviour {
        Behaviour::clone(&self.behaviour.load())
    }

    /// Counts one more faultable request and says whether the configured fault hits it.
    pub(crate) fn next_request_faulted(&self, ratio: f64) -> bool {
        let number = self.fault_sequence.fetch_add(1, Ordering::Relaxed) + 1;
        nth_request_is_faulted(number, ratio)
    }

    /// Applies a `POST /mock/control` body; returns the new behaviour or why it was refused.
    pub(crate) fn control(&self, body: &[u8]) -> Result<Behaviour, String> {
        let _serialised = self.control.lock().unwrap_or_else(PoisonError::into_inner);
        let ControlChange { behaviour, restarts_fault_sequence } = apply_control(self.behaviour(), body)?;
        if restarts_fault_sequence {
            self.fault_sequence.store(0, Ordering::Relaxed);
        }
        self.behaviour.store(std::sync::Arc::new(behaviour.clone()));
        Ok(behaviour)
    }
}
