pub(crate) mod agent;
pub(crate) mod body;
pub(crate) mod stream;
