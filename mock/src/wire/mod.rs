pub(crate) mod clock;
pub(crate) mod form;
pub(crate) mod head;
pub(crate) mod response;
pub(crate) mod routes;
pub(crate) mod target;
