pub(crate) mod call;
pub(crate) mod decide;
pub(crate) mod plan;
