//! SECRET-1: which paths hold secrets, and whether a path a command reads could be one.
//!
//! A pattern is written like a path, with shell globs in its components:
//! * `/etc/shadow`, `/proc/*/environ`: from the root, component by component;
//! * `~/.ssh/id_*`: in a home directory, which for a file read means under any directory
//!   (`/root/.ssh/id_rsa`, `/home/bob/.ssh/id_rsa`, `/var/lib/git/.ssh/id_rsa`);
//! * `.env`, `*.key`: a file of that name in any directory;
//! * a trailing `/` (`/etc/ssl/private/`): the directory and everything under it;
//! * a leading `!` (`!~/.ssh/*.pub`): an exception, files the patterns above must not catch.
//!
//! A path read by a command is normalised first (`path.rs`), and matches when some file it
//! could name (a glob's, a brace alternative's, a run-time part's) matches a pattern and not
//! an exception. A path that starts somewhere unknown (`../etc/shadow` above the home
//! directory, `$X/etc/shadow`) matches a pattern whose last components it names (at least
//! two of them, so `$X/config` is not `~/.kube/config`). A directory read recursively (`grep
//! -r`, `tar -c`, `find -exec`) matches when a pattern anchored at the root or in a home
//! directory lies under it; name-only patterns (`.env`, `*.key`) are not looked for under
//! every directory, since any directory could hold one: the output scanner (SECRET-2) is the
//! net for those.

mod glob;
mod path;
mod watch;

use std::sync::OnceLock;

pub(crate) use glob::Glob;
use path::Anchor;
pub(crate) use path::{Cwd, NormPath, normalise};
pub(crate) use watch::SecretWatch;

/// The built-in secret paths (SECRET-1), in the order reasons prefer them.
pub const DEFAULT_SECRET_PATHS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/shadow.*",
    "/etc/gshadow.*",
    "/var/backups/shadow.*",
    "/var/backups/gshadow.*",
    "/etc/security/opasswd",
    "/etc/ssh/ssh_host_*_key",
    "~/.ssh/id_*",
    "!~/.ssh/*.pub",
    "/etc/ssl/private/",
    "*.key",
    "*key*.pem",
    "*priv*.pem",
    ".env",
    ".env.*",
    "!.env.example",
    "!.env.sample",
    "!.env.template",
    "!.env.dist",
    "~/.aws/credentials",
    "~/.kube/config",
    "/etc/kubernetes/admin.conf",
    "~/.docker/config.json",
    "~/.git-credentials",
    "~/.netrc",
    "~/.pgpass",
    "/proc/*/environ",
    "/root/.bash_history",
    "~/.*_history",
    "/root/.*",
];

/// Where a pattern starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PatternAnchor {
    /// At `/`.
    Root,
    /// In a home directory.
    Home,
    /// A file of that name anywhere.
    Anywhere,
}

/// One secret path pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretPattern {
    text: String,
    anchor: PatternAnchor,
    components: Vec<Glob>,
    directory: bool,
    exception: bool,
}

impl SecretPattern {
    /// Reads a pattern (see the module documentation); `None` for an empty one.
    pub fn parse(text: &str) -> Option<SecretPattern> {
        let (exception, body) = match text.strip_prefix('!') {
            Some(body) => (true, body),
            None => (false, text),
        };
        let directory = body.ends_with('/') && body.len() > 1;
        let (anchor, rest) = if let Some(rest) = body.strip_prefix("~/") {
            (PatternAnchor::Home, rest)
        } else if let Some(rest) = body.strip_prefix('/') {
            (PatternAnchor::Root, rest)
        } else {
            (PatternAnchor::Anywhere, body)
        };
        let components: Vec<Glob> = rest
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .map(Glob::parse)
            .collect();
        if components.is_empty() || rest.split('/').any(|c| c == "..") {
            return None;
        }
        Some(SecretPattern {
            text: text.to_owned(),
            anchor,
            components,
            directory,
            exception,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether this is an exception (`!...`).
    pub fn is_exception(&self) -> bool {
        self.exception
    }

    /// The pattern's components as they would be written from the root, one list per home
    /// directory layout (`/root/...`, `/home/*/...`), for the recursive-read check.
    fn rooted(&self) -> Vec<Vec<Glob>> {
        match self.anchor {
            PatternAnchor::Root => vec![self.components.clone()],
            PatternAnchor::Home => {
                let mut root = vec![Glob::parse("root")];
                root.extend(self.components.iter().cloned());
                let mut home = vec![Glob::parse("home"), Glob::any()];
                home.extend(self.components.iter().cloned());
                vec![root, home]
            }
            PatternAnchor::Anywhere => Vec::new(),
        }
    }

    /// Whether the file `path` could name is one this pattern covers.
    fn covers_file(&self, path: &NormPath) -> bool {
        let q = &path.components;
        let p = &self.components;
        match (self.anchor, path.anchor) {
            (PatternAnchor::Root, Anchor::Root) => rooted_match(q, p, self.directory),
            (PatternAnchor::Root, Anchor::Home) => {
                let mut root = vec![Glob::parse("root")];
                root.extend(q.iter().cloned());
                let mut home = vec![Glob::parse("home"), Glob::any()];
                home.extend(q.iter().cloned());
                rooted_match(&root, p, self.directory) || rooted_match(&home, p, self.directory)
            }
            (PatternAnchor::Root, Anchor::Unknown) => tail_match(q, p, self.directory),
            (PatternAnchor::Home | PatternAnchor::Anywhere, _) => {
                suffix_match(q, p, self.directory)
            }
        }
    }

    /// Whether a recursive read of the directory `path` could reach a file this pattern
    /// covers.
    fn under_tree(&self, path: &NormPath) -> bool {
        if self.covers_file(path) {
            return true;
        }
        let q = &path.components;
        match path.anchor {
            Anchor::Root => self.rooted().iter().any(|p| prefix_of(q, p)),
            Anchor::Home => {
                self.anchor == PatternAnchor::Home && prefix_of(q, &self.components)
                    || self.rooted().iter().any(|p| {
                        let mut root = vec![Glob::parse("root")];
                        root.extend(q.iter().cloned());
                        let mut home = vec![Glob::parse("home"), Glob::any()];
                        home.extend(q.iter().cloned());
                        prefix_of(&root, p) || prefix_of(&home, p)
                    })
            }
            // Above a home directory, or from a place named at run time: it may hold any
            // of them.
            Anchor::Unknown if q.is_empty() => self.anchor != PatternAnchor::Anywhere,
            Anchor::Unknown => self
                .rooted()
                .iter()
                .any(|p| (0..p.len()).any(|at| prefix_of(q, &p[at..]))),
        }
    }

    /// Whether a search restricted to names matching `name` (`find -name`) can find a file
    /// this pattern covers under `path`.
    fn under_tree_named(&self, path: &NormPath, name: &Glob) -> bool {
        let Some(last) = self.components.last() else {
            return false;
        };
        if self.anchor == PatternAnchor::Anywhere {
            // Only a search for that very name (or a narrower glob) counts.
            return name.within(last);
        }
        let last_ok = self.directory || last.overlaps(name);
        last_ok && self.under_tree(path)
    }
}

/// `q` (from the root) names a file `p` (from the root) covers.
fn rooted_match(q: &[Glob], p: &[Glob], directory: bool) -> bool {
    let lengths_fit = if directory {
        q.len() >= p.len()
    } else {
        q.len() == p.len()
    };
    lengths_fit && q.iter().zip(p).all(|(a, b)| a.overlaps(b))
}

/// `q` ends with components `p` covers, at any depth.
fn suffix_match(q: &[Glob], p: &[Glob], directory: bool) -> bool {
    if directory {
        return (0..q.len()).any(|at| rooted_match(&q[at..], p, true));
    }
    q.len() >= p.len() && rooted_match(&q[q.len() - p.len()..], p, false)
}

/// `q`, after a start nobody knows, could be the last components of `p` (at least two of
/// them, or all of a one-component pattern).
fn tail_match(q: &[Glob], p: &[Glob], directory: bool) -> bool {
    let needed = p.len().min(2);
    (0..p.len()).any(|at| {
        let tail = &p[at..];
        let named = q.len().min(tail.len());
        named >= needed
            && (q.len() == tail.len() || directory && q.len() > tail.len())
            && q.iter().zip(tail).all(|(a, b)| a.overlaps(b))
    })
}

/// `q` is a directory on the way to what `p` covers (or `p` itself).
fn prefix_of(q: &[Glob], p: &[Glob]) -> bool {
    q.len() <= p.len() && q.iter().zip(p).all(|(a, b)| a.overlaps(b))
}

/// How a command reads a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The file itself.
    File,
    /// The directory and everything under it.
    Tree,
    /// Everything under it whose name matches a glob (`find DIR -name GLOB -exec`).
    Named,
}

/// The secret paths in force: the defaults, changed by the policy file's `[[secret]]` rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretPaths {
    patterns: Vec<SecretPattern>,
}

impl SecretPaths {
    /// The built-in list ([`DEFAULT_SECRET_PATHS`]).
    pub fn defaults() -> &'static SecretPaths {
        static DEFAULTS: OnceLock<SecretPaths> = OnceLock::new();
        DEFAULTS.get_or_init(|| SecretPaths {
            patterns: DEFAULT_SECRET_PATHS
                .iter()
                .filter_map(|text| SecretPattern::parse(text))
                .collect(),
        })
    }

    /// The patterns, in order.
    pub fn patterns(&self) -> &[SecretPattern] {
        &self.patterns
    }

    /// Adds a pattern (a no-op when it is already listed).
    pub(crate) fn add(&mut self, pattern: SecretPattern) {
        if !self.patterns.iter().any(|p| p.text == pattern.text) {
            self.patterns.push(pattern);
        }
    }

    /// Removes the pattern written exactly `text`; `false` when none is.
    pub(crate) fn remove(&mut self, text: &str) -> bool {
        let before = self.patterns.len();
        self.patterns.retain(|p| p.text != text);
        self.patterns.len() != before
    }

    /// The first pattern the path, read with `scope`, could reach, unless an exception
    /// covers the whole of what it names.
    pub(crate) fn find(
        &self,
        path: &NormPath,
        scope: Scope,
        name: Option<&Glob>,
    ) -> Option<&SecretPattern> {
        let excepted = self.patterns.iter().any(|p| {
            p.exception
                && p.covers_file(path)
                && path
                    .components
                    .last()
                    .zip(p.components.last())
                    .is_some_and(|(q, e)| q.within(e))
        });
        if excepted {
            return None;
        }
        self.patterns
            .iter()
            .filter(|p| !p.exception)
            .find(|p| match scope {
                Scope::File => p.covers_file(path),
                Scope::Tree => p.under_tree(path),
                Scope::Named => match name {
                    Some(name) => p.under_tree_named(path, name),
                    None => p.under_tree(path),
                },
            })
    }
}

#[cfg(test)]
mod tests;
