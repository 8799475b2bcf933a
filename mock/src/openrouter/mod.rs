pub(crate) mod control;
pub(crate) mod errors;
pub(crate) mod router;
pub(crate) mod select;
pub(crate) mod telemetry;
