pub(crate) mod chunked;
pub(crate) mod link;
pub(crate) mod serve;
pub(crate) mod tls;
