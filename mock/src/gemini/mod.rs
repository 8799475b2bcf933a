pub(crate) mod answer;
pub(crate) mod content;
pub(crate) mod request;
pub(crate) mod stream;
