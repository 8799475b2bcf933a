//! The complexity auto-routers' part of the routes (`crate::routers::complexity` runs them).

use pointwork_core::complexity::AutoRouter;
use pointwork_core::Snapshot;

/// Every complexity router over one snapshot; `None` in [`super::Routes`] without any.
pub struct ComplexityRoutes {
    pub routers: Vec<AutoRouter>,
}

impl ComplexityRoutes {
    pub fn new(config: &pointwork_config::Config, snapshot: &Snapshot) -> Result<Option<ComplexityRoutes>, String> {
        if config.complexity_routers.is_empty() {
            return Ok(None);
        }
        let routers =
            config.complexity_routers.iter().map(|c| AutoRouter::new(c.clone(), snapshot)).collect::<Result<_, _>>()?;
        Ok(Some(ComplexityRoutes { routers }))
    }

    pub fn router(&self, model: &str) -> Option<&AutoRouter> {
        self.routers.iter().find(|r| r.name() == model)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.routers.iter().map(AutoRouter::name)
    }
}
