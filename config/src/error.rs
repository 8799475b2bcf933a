//! What loading a config reports: errors that refuse it and warnings that do not, each naming
//! the key path (and, for included files, the file) it is about.

use std::fmt;

/// One reason a config is refused. `path` names the file and key path, e.g.
/// `models.yaml: model_list[0].litellm_params.model` or `config.yaml:3:7` for a YAML syntax error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Every reason a config is refused, in the order they were found. Never empty when returned
/// as an `Err`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

impl From<ConfigError> for ConfigErrors {
    fn from(e: ConfigError) -> Self {
        ConfigErrors(vec![e])
    }
}

/// Something in the config that Pointwork reads but does not act on (yet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_display_one_per_line() {
        let errs = ConfigErrors(vec![
            ConfigError {
                path: "model_list[0].model_name".into(),
                message: "required key is missing (expected a string)".into(),
            },
            ConfigError { path: "pointwork.shards".into(), message: "expected a positive integer, got 0".into() },
        ]);
        assert_eq!(
            errs.to_string(),
            "model_list[0].model_name: required key is missing (expected a string)\n\
             pointwork.shards: expected a positive integer, got 0"
        );
    }
}
