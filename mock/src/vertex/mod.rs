pub(crate) mod answer;
pub(crate) mod token;
