pub(crate) mod answer;
pub(crate) mod auth;
pub(crate) mod converse;
pub(crate) mod embed;
pub(crate) mod request;
pub(crate) mod stream;
