pub(crate) mod body;
pub(crate) mod stream;
