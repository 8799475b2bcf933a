//! What is checked around the decision, before any endpoint is scored: the retention a request
//! asks for, its data class, and the policy's daily budget.

use std::fmt;

use crate::policy::Policy;

/// What a request brings that the admission reads.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Admission<'a> {
    /// `llmeu.retention`: days a provider may keep the prompt.
    pub retention: Option<u32>,
    /// `llmeu.data_class`.
    pub data_class: Option<&'a str>,
    /// What requests under the policy spent today, in US dollars.
    pub spent_today_usd: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AdmitRefusal {
    /// More retention than the policy allows (zero is the only retention implemented).
    Retention {
        asked: u32,
        allowed: u32,
    },
    DataClass(Box<str>),
    /// `max_usd_per_day` is used up.
    BudgetExceeded {
        spent: f64,
        limit: f64,
    },
}

impl AdmitRefusal {
    pub fn code(&self) -> &'static str {
        match self {
            AdmitRefusal::Retention { .. } => "retention_not_allowed",
            AdmitRefusal::DataClass(_) => "data_class_not_allowed",
            AdmitRefusal::BudgetExceeded { .. } => "budget_exceeded",
        }
    }
}

impl fmt::Display for AdmitRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdmitRefusal::Retention { asked, allowed } => write!(
                f,
                "llmeu.retention {asked} asks for more than the policy allows ({allowed} days; only zero retention is implemented)"
            ),
            AdmitRefusal::DataClass(class) => write!(f, "llmeu.data_class {class:?} is not among the policy's data_classes_allowed"),
            AdmitRefusal::BudgetExceeded { spent, limit } => {
                write!(f, "Budget has been exceeded: the policy's max_usd_per_day is {limit}, spent today {spent:.6}")
            }
        }
    }
}

/// Checks a request against what the policy enforces around the decision.
pub fn admit(policy: &Policy, ask: &Admission) -> Result<(), AdmitRefusal> {
    let allowed = policy.retention.unwrap_or(0);
    if let Some(asked) = ask.retention.filter(|&asked| asked > allowed) {
        return Err(AdmitRefusal::Retention { asked, allowed });
    }
    if let Some(class) = ask.data_class {
        let listed =
            policy.data_classes_allowed.is_empty() || policy.data_classes_allowed.iter().any(|c| &**c == class);
        if !listed {
            return Err(AdmitRefusal::DataClass(class.into()));
        }
    }
    if let Some(limit) = policy.max_usd_per_day.filter(|&limit| ask.spent_today_usd >= limit) {
        return Err(AdmitRefusal::BudgetExceeded { spent: ask.spent_today_usd, limit });
    }
    Ok(())
}
