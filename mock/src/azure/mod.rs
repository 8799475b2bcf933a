pub(crate) mod answer;
pub(crate) mod filter;
pub(crate) mod stream;
pub(crate) mod token;
