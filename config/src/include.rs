//! `include:` — LiteLLM's way of splitting a config across files. The main file and its includes
//! (and theirs) are assembled into one [`Document`]: every file's `model_list` entries in order
//! (the main file's first), and each other top-level section from the one file that sets it.

use std::fs;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use crate::check::{Checker, KeyPath};
use crate::kinds;
use crate::node::Node;
use crate::yaml::parse_config_yaml;

pub(crate) const INCLUDE_KEY: &str = "include";
pub(crate) const MODEL_LIST_KEY: &str = "model_list";

/// One top-level section (`router_settings`, `pointwork`, …) and where it came from.
pub(crate) struct Section {
    pub(crate) key: String,
    pub(crate) node: Node,
    pub(crate) path: KeyPath,
    /// The file that sets it, as messages name it.
    pub(crate) file_label: Rc<str>,
    /// The folder of that file: a relative path in the section is relative to it.
    pub(crate) dir: PathBuf,
}

/// One file's `model_list` value.
pub(crate) struct ModelList {
    pub(crate) node: Node,
    pub(crate) path: KeyPath,
}

/// The main file and its includes, merged.
pub(crate) struct Document {
    pub(crate) sections: Vec<Section>,
    pub(crate) model_lists: Vec<ModelList>,
    /// The main file (when read from disk) and every included file, in the order read.
    pub(crate) files: Vec<PathBuf>,
}

impl Document {
    pub(crate) fn section(&self, key: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.key == key)
    }
}

/// The main config: its parsed tree, how messages name it, and where includes are resolved.
pub(crate) struct MainFile<'p> {
    pub(crate) root: Node,
    pub(crate) label: Rc<str>,
    pub(crate) dir: &'p Path,
    /// The file on disk, if the config was read from one.
    pub(crate) path: Option<&'p Path>,
}

/// A file on the include chain, to detect cycles.
struct Open {
    canonical: PathBuf,
    label: Rc<str>,
}

struct Assembler<'c, 'e> {
    checker: &'c mut Checker<'e>,
    main_dir: PathBuf,
    doc: Document,
    chain: Vec<Open>,
}

/// Reads every include of `main` and merges them; problems go to `checker`. `None` when the
/// main file is not a map of sections (nothing else can be said about it then).
pub(crate) fn assemble(main: MainFile, checker: &mut Checker) -> Option<Document> {
    if !is_sections(&main.root) {
        not_sections(checker, &main.label, &main.root);
        return None;
    }
    let mut asm = Assembler {
        checker,
        main_dir: main.dir.to_path_buf(),
        doc: Document {
            sections: Vec::new(),
            model_lists: Vec::new(),
            files: main.path.map(Path::to_path_buf).into_iter().collect(),
        },
        chain: Vec::new(),
    };
    if let Some(canonical) = main.path.and_then(|p| fs::canonicalize(p).ok()) {
        asm.chain.push(Open { canonical, label: main.label.clone() });
    }
    asm.add_file(main.root, None, main.label, main.dir);
    Some(asm.doc)
}

/// A config file is a map of sections, or empty.
fn is_sections(root: &Node) -> bool {
    matches!(root, Node::Map(_) | Node::Null)
}

fn not_sections(checker: &mut Checker, label: &str, root: &Node) {
    let message = format!("expected a map of config sections, got {}", root.describe());
    checker.error(label, message);
}

impl Assembler<'_, '_> {
    /// Adds one file's sections and model list, then its includes in order.
    /// `file` is `None` for the main file, whose key paths carry no file name.
    fn add_file(&mut self, root: Node, file: Option<Rc<str>>, label: Rc<str>, dir: &Path) {
        let entries = match root {
            Node::Map(entries) => entries,
            Node::Null => Vec::new(),
            other => return not_sections(self.checker, &label, &other),
        };
        let root_path = KeyPath::root(file);
        let mut includes = None;
        for (key, node) in entries {
            let path = root_path.key(&key);
            match key.as_str() {
                INCLUDE_KEY => includes = Some((node, path)),
                MODEL_LIST_KEY => self.doc.model_lists.push(ModelList { node, path }),
                _ => match self.doc.section(&key) {
                    Some(first) => {
                        let message = format!(
                            "{key} is also set in {}; only model_list may appear in more than one file",
                            first.file_label
                        );
                        self.checker.error(&path, message);
                    }
                    None => self.doc.sections.push(Section {
                        key,
                        node,
                        path,
                        file_label: label.clone(),
                        dir: dir.to_path_buf(),
                    }),
                },
            }
        }
        if let Some((node, path)) = includes {
            for (target, target_path) in self.include_targets(&node, &path) {
                self.include(&target, &target_path, dir);
            }
        }
    }

    /// `include: file.yaml` or `include: [a.yaml, b.yaml]`.
    fn include_targets(&mut self, node: &Node, path: &KeyPath) -> Vec<(String, KeyPath)> {
        let items: Vec<(&Node, KeyPath)> = match node {
            Node::Null => Vec::new(),
            Node::List(items) => items.iter().enumerate().map(|(i, n)| (n, path.index(i))).collect(),
            single => vec![(single, path.clone())],
        };
        items
            .into_iter()
            .filter_map(|(n, p)| {
                let target = self.checker.read(n, &p, &kinds::NON_EMPTY_STRING)?;
                Some((target, p))
            })
            .collect()
    }

    fn include(&mut self, target: &str, path: &KeyPath, dir: &Path) {
        let full = dir.join(target);
        let canonical = match fs::canonicalize(&full) {
            Ok(c) => c,
            Err(e) => {
                let message = format!("cannot read {}: {e}", full.display());
                self.checker.error(path, message);
                return;
            }
        };
        let label: Rc<str> = self.label_for(&full).into();
        if self.chain.iter().any(|open| open.canonical == canonical) {
            let mut names: Vec<&str> = self.chain.iter().map(|o| &*o.label).collect();
            names.push(&label);
            let message = format!("include cycle: {}", names.join(" → "));
            self.checker.error(path, message);
            return;
        }
        let text = match fs::read_to_string(&full) {
            Ok(t) => t,
            Err(e) => {
                let message = format!("cannot read {}: {e}", full.display());
                self.checker.error(path, message);
                return;
            }
        };
        self.doc.files.push(full.clone());
        let root = match parse_config_yaml(&text, &label) {
            Ok((root, duplicate)) => {
                if let Some(w) = duplicate {
                    self.checker.warn(w.path, w.message);
                }
                root
            }
            Err(e) => {
                self.checker.error(e.path, e.message);
                return;
            }
        };
        self.chain.push(Open { canonical, label: label.clone() });
        let include_dir = full.parent().unwrap_or(Path::new("")).to_path_buf();
        self.add_file(root, Some(label.clone()), label, &include_dir);
        self.chain.pop();
    }

    /// An included file as messages name it: relative to the main file's folder when inside it.
    fn label_for(&self, full: &Path) -> String {
        let full = normalize(full);
        match full.strip_prefix(normalize(&self.main_dir)) {
            Ok(relative) => relative.display().to_string(),
            Err(_) => full.display().to_string(),
        }
    }
}

/// Removes `.` and folds `dir/..` without touching the filesystem.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_dots() {
        assert_eq!(normalize(Path::new("a/./b/../c.yaml")), PathBuf::from("a/c.yaml"));
        assert_eq!(normalize(Path::new("../x.yaml")), PathBuf::from("../x.yaml"));
    }
}
