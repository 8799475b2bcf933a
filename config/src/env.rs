//! `os.environ/NAME` references: LiteLLM's way of keeping secrets out of the config file. A name
//! is looked up in the config's own `environment_variables` first, then in the process
//! environment (through a function, so tests never touch the real one).

use std::collections::HashMap;

/// The exact prefix of a string value that names an environment variable.
pub(crate) const ENV_REFERENCE_PREFIX: &str = "os.environ/";

/// The variable a string value refers to, if the whole value is an `os.environ/NAME` reference.
pub(crate) fn env_reference(value: &str) -> Option<&str> {
    value.strip_prefix(ENV_REFERENCE_PREFIX)
}

/// Where `os.environ/NAME` references are looked up.
pub(crate) struct Env<'a> {
    /// From the config's `environment_variables` section.
    defined: HashMap<String, String>,
    process: &'a dyn Fn(&str) -> Option<String>,
}

impl<'a> Env<'a> {
    pub(crate) fn new(process: &'a dyn Fn(&str) -> Option<String>) -> Env<'a> {
        Env { defined: HashMap::new(), process }
    }

    /// Adds a variable from `environment_variables`; it wins over the process environment.
    pub(crate) fn define(&mut self, name: String, value: String) {
        self.defined.insert(name, value);
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<String> {
        match self.defined.get(name) {
            Some(v) => Some(v.clone()),
            None => (self.process)(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_variables_win_over_the_process_environment() {
        let process = |name: &str| (name == "A" || name == "B").then(|| format!("process-{name}"));
        let mut env = Env::new(&process);
        env.define("A".into(), "config-A".into());
        assert_eq!(env.lookup("A").as_deref(), Some("config-A"));
        assert_eq!(env.lookup("B").as_deref(), Some("process-B"));
        assert_eq!(env.lookup("C"), None);
    }

    #[test]
    fn only_whole_values_are_references() {
        assert_eq!(env_reference("os.environ/KEY"), Some("KEY"));
        assert_eq!(env_reference("x os.environ/KEY"), None);
        assert_eq!(env_reference("os.environ"), None);
    }
}
