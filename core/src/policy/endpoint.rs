//! An endpoint as the policy router sees it: a deployment and its policy attributes
//! (`model_info` in the config; defaults in `docs/configuration.md`).

use std::fmt;

use crate::{Deployment, DeploymentIdx};

/// `model_info.kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EndpointKind {
    /// Something on this deployment answers requests.
    #[default]
    Hosted,
    /// A catalogue row: known, described, but nothing answers a request with it.
    CatalogueOnly,
}

impl EndpointKind {
    pub const ALL: [EndpointKind; 2] = [EndpointKind::Hosted, EndpointKind::CatalogueOnly];

    pub fn as_str(self) -> &'static str {
        match self {
            EndpointKind::Hosted => "hosted",
            EndpointKind::CatalogueOnly => "catalogue_only",
        }
    }

    pub fn from_name(name: &str) -> Option<EndpointKind> {
        EndpointKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// `model_info.sovereignty_class`: who owns and who operates where the endpoint runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SovereigntyClass {
    /// An EU company running it in the EU.
    EuOwnedEuOperated,
    /// An EU region of a company from outside the EU.
    EuRegionOfNonEuParent,
    /// Outside the EU.
    NonEu,
    /// Nobody knows where it runs: never addressable, so it never wins a route.
    CatalogueUnknown,
}

impl SovereigntyClass {
    pub const ALL: [SovereigntyClass; 4] = [
        SovereigntyClass::EuOwnedEuOperated,
        SovereigntyClass::EuRegionOfNonEuParent,
        SovereigntyClass::NonEu,
        SovereigntyClass::CatalogueUnknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SovereigntyClass::EuOwnedEuOperated => "eu_owned_eu_operated",
            SovereigntyClass::EuRegionOfNonEuParent => "eu_region_of_non_eu_parent",
            SovereigntyClass::NonEu => "non_eu",
            SovereigntyClass::CatalogueUnknown => "catalogue_unknown",
        }
    }

    pub fn from_name(name: &str) -> Option<SovereigntyClass> {
        SovereigntyClass::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Whether the class runs in the EU.
    pub fn is_eu_hosted(self) -> bool {
        matches!(self, SovereigntyClass::EuOwnedEuOperated | SovereigntyClass::EuRegionOfNonEuParent)
    }

    /// How the route reason describes it.
    pub fn description(self) -> &'static str {
        match self {
            SovereigntyClass::EuOwnedEuOperated => "EU-owned, EU-operated",
            SovereigntyClass::EuRegionOfNonEuParent => "EU region, non-EU parent",
            SovereigntyClass::NonEu => "non-EU",
            SovereigntyClass::CatalogueUnknown => "location unknown",
        }
    }

    /// `sovereignty_bonus` when `model_info` does not set it: documented sovereignty earns
    /// points.
    pub fn default_bonus(self) -> f64 {
        match self {
            SovereigntyClass::EuOwnedEuOperated => 1.0,
            SovereigntyClass::EuRegionOfNonEuParent => 0.5,
            SovereigntyClass::NonEu | SovereigntyClass::CatalogueUnknown => 0.0,
        }
    }
}

impl fmt::Display for SovereigntyClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `model_info.modalities`: what a model takes and gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modality {
    Text,
    Vision,
    Embedding,
    SpeechRecognition,
    Reranker,
}

impl Modality {
    pub const ALL: [Modality; 5] =
        [Modality::Text, Modality::Vision, Modality::Embedding, Modality::SpeechRecognition, Modality::Reranker];

    pub fn as_str(self) -> &'static str {
        match self {
            Modality::Text => "text",
            Modality::Vision => "vision",
            Modality::Embedding => "embedding",
            Modality::SpeechRecognition => "speech-recognition",
            Modality::Reranker => "reranker",
        }
    }

    pub fn from_name(name: &str) -> Option<Modality> {
        Modality::ALL.into_iter().find(|m| m.as_str() == name)
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of modalities (default: text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modalities(u8);

impl Modalities {
    pub const TEXT: Modalities = Modalities(1);

    pub fn of(list: &[Modality]) -> Modalities {
        Modalities(list.iter().fold(0, |bits, m| bits | m.bit()))
    }

    pub fn contains(self, m: Modality) -> bool {
        self.0 & m.bit() != 0
    }
}

impl Default for Modalities {
    fn default() -> Self {
        Modalities::TEXT
    }
}

/// What `model_info` says of a deployment for the policy router; `None` = the documented
/// default.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PolicyAttrs {
    pub kind: EndpointKind,
    /// Default `up`.
    pub status: Option<Box<str>>,
    /// Default `catalogue_unknown`: a deployment that does not say where it runs never wins.
    pub class: Option<SovereigntyClass>,
    /// Default: the deployment's `region_name`, else unknown (`""`, in no region scope).
    pub region: Option<Box<str>>,
    /// Default: the deployment's provider prefix.
    pub provider: Option<Box<str>>,
    pub partner: bool,
    pub modalities: Modalities,
    pub task_fit: Vec<(Box<str>, f64)>,
    pub language_fit: Vec<(Box<str>, f64)>,
    pub docs_completeness: Option<f64>,
    /// Default: the class's ([`SovereigntyClass::default_bonus`]).
    pub sovereignty_bonus: Option<f64>,
}

/// One endpoint: the deployment, what the filter reads and what the score weighs.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyEndpoint {
    pub deployment: DeploymentIdx,
    /// The deployment id: the last tie-break.
    pub id: Box<str>,
    /// The model's slug (its model group), what `models_allow` / `models_deny` list.
    pub model: Box<str>,
    /// `model_info.provider` (default: the deployment's provider prefix).
    pub provider: Box<str>,
    pub kind: EndpointKind,
    /// `model_info.status` as configured (`up`, `degraded`, `down`, `maintenance`, …); the
    /// shards may know a newer one.
    pub status: Box<str>,
    pub class: SovereigntyClass,
    /// `model_info.region`, e.g. `de-ber` (country code, a dash, a place), or a cloud region
    /// like `eu-central-1`.
    pub region: Box<str>,
    pub partner: bool,
    pub modalities: Modalities,
    /// Input tokens plus output tokens the model takes (`None`: not documented, never too small).
    pub context_window: Option<u64>,
    /// US dollars per million tokens, input and output together (`None`: unpriced, never above
    /// a cap).
    pub usd_per_1m: Option<f64>,
    /// Per task (`coding`, `chat`, …), 0 to 1.
    pub task_fit: Vec<(Box<str>, f64)>,
    /// Per language (`en`, `de`, …), 0 to 1.
    pub language_fit: Vec<(Box<str>, f64)>,
    pub docs_completeness: f64,
    pub sovereignty_bonus: f64,
}

/// What a fit list says when it has no entry for the asked task or language, or when the
/// request asks for none.
pub const DEFAULT_FIT: f64 = 0.5;
/// `docs_completeness` when `model_info` does not set it.
pub const DEFAULT_DOCS_COMPLETENESS: f64 = 0.5;

impl PolicyEndpoint {
    /// An up, hosted, EU-owned text endpoint in `de-ber` with the documented defaults.
    pub fn new(deployment: DeploymentIdx, id: &str, model: &str, provider: &str) -> PolicyEndpoint {
        let class = SovereigntyClass::EuOwnedEuOperated;
        PolicyEndpoint {
            deployment,
            id: id.into(),
            model: model.into(),
            provider: provider.into(),
            kind: EndpointKind::Hosted,
            status: "up".into(),
            class,
            region: "de-ber".into(),
            partner: false,
            modalities: Modalities::TEXT,
            context_window: None,
            usd_per_1m: None,
            task_fit: Vec::new(),
            language_fit: Vec::new(),
            docs_completeness: DEFAULT_DOCS_COMPLETENESS,
            sovereignty_bonus: class.default_bonus(),
        }
    }

    /// The endpoint of a deployment with policy attributes.
    pub fn of(deployment: DeploymentIdx, d: &Deployment, attrs: &PolicyAttrs) -> PolicyEndpoint {
        let class = attrs.class.unwrap_or(SovereigntyClass::CatalogueUnknown);
        let region = attrs.region.clone().or_else(|| d.region_name.as_deref().map(Box::from));
        PolicyEndpoint {
            deployment,
            id: d.id.as_str().into(),
            model: d.model_name.as_str().into(),
            provider: attrs.provider.clone().unwrap_or_else(|| d.provider.prefix().into()),
            kind: attrs.kind,
            status: attrs.status.clone().unwrap_or_else(|| "up".into()),
            class,
            region: region.unwrap_or_default(),
            partner: attrs.partner,
            modalities: attrs.modalities,
            context_window: d.max_input_tokens.or(d.max_tokens),
            usd_per_1m: d.price_per_token().map(|p| p * 1_000_000.0),
            task_fit: attrs.task_fit.clone(),
            language_fit: attrs.language_fit.clone(),
            docs_completeness: attrs.docs_completeness.unwrap_or(DEFAULT_DOCS_COMPLETENESS),
            sovereignty_bonus: attrs.sovereignty_bonus.unwrap_or(class.default_bonus()),
        }
    }

    pub fn task_fit(&self, task: Option<&str>) -> f64 {
        fit(&self.task_fit, task)
    }

    pub fn language_fit(&self, language: Option<&str>) -> f64 {
        fit(&self.language_fit, language)
    }
}

fn fit(list: &[(Box<str>, f64)], key: Option<&str>) -> f64 {
    key.and_then(|k| list.iter().find(|(name, _)| &**name == k)).map_or(DEFAULT_FIT, |(_, v)| *v)
}

/// Whether a status lets an endpoint serve.
pub fn status_serves(status: &str) -> bool {
    status == "up" || status == "degraded"
}
