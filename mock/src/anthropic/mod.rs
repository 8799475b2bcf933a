pub(crate) mod agent;
pub(crate) mod errors;
pub(crate) mod exchange;
pub(crate) mod messages;
pub(crate) mod stream;
