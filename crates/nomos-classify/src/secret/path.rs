//! A path as a command names it, normalised the way the kernel would walk it: `~`, `~user`
//! and `$HOME`, `.` and `..`, doubled slashes, brace alternatives, and parts known only at
//! run time, relative to the directory the command runs in.

use super::glob::Glob;

/// Where a normalised path starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// At `/`.
    Root,
    /// In a home directory (`~`, `$HOME`, or relative to the login directory).
    Home,
    /// Somewhere nobody can name before it runs (`$X/...`, `..` above a home directory).
    Unknown,
}

/// A path split into component globs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NormPath {
    pub(crate) anchor: Anchor,
    pub(crate) components: Vec<Glob>,
    /// The components as text, for reasons.
    pub(crate) text: Vec<String>,
}

impl NormPath {
    fn start(anchor: Anchor) -> NormPath {
        NormPath {
            anchor,
            components: Vec::new(),
            text: Vec::new(),
        }
    }

    fn push(&mut self, component: &str, dynamic: bool) {
        match component {
            "" | "." => {}
            ".." => {
                if self.components.pop().is_none() {
                    self.text.clear();
                    // `..` above `/` stays at `/`; above a home it leaves for a place unknown.
                    if self.anchor == Anchor::Home {
                        self.anchor = Anchor::Unknown;
                    }
                } else {
                    self.text.pop();
                }
            }
            _ if dynamic && is_expansion(component) => {
                self.components.push(Glob::any());
                self.text.push(component.to_owned());
            }
            _ => {
                self.components.push(Glob::parse(component));
                self.text.push(component.to_owned());
            }
        }
    }

    /// The path as a reason spells it (`/etc/shadow`, `~/.ssh/id_rsa`, `…/etc/shadow`).
    pub(crate) fn display(&self) -> String {
        let body = self.text.join("/");
        match self.anchor {
            Anchor::Root => format!("/{body}"),
            Anchor::Home if body.is_empty() => "~".to_owned(),
            Anchor::Home => format!("~/{body}"),
            Anchor::Unknown => format!(".../{body}"),
        }
    }
}

/// The directory a command runs in, as far as the classifier can follow `cd`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cwd {
    path: NormPath,
}

impl Cwd {
    /// The login directory: commands run in the home directory of the account.
    pub(crate) fn login() -> Cwd {
        Cwd {
            path: NormPath::start(Anchor::Home),
        }
    }

    /// The directory after `cd TARGET` (`None`: back to the login directory; a target known
    /// only at run time, or `cd -`, leaves it unknown).
    pub(crate) fn change(&mut self, target: Option<(&str, bool)>) {
        let Some((text, dynamic)) = target else {
            *self = Cwd::login();
            return;
        };
        if text == "-" {
            self.path = NormPath::start(Anchor::Unknown);
            return;
        }
        let mut found = normalise(text, dynamic, self);
        self.path = match found.len() {
            1 => found.remove(0),
            _ => NormPath::start(Anchor::Unknown),
        };
        if dynamic && self.path.components.iter().any(|c| !c.is_literal()) {
            self.path = NormPath::start(Anchor::Unknown);
        }
    }
}

/// How many brace alternatives one word may expand to before the rest are read as written.
const MAX_ALTERNATIVES: usize = 64;

/// Normalises a path word (`dynamic`: it holds an expansion), relative to `cwd`. A word
/// whose start is known only at run time (`$X`, `$(...)`) and that names nothing after it
/// gives no path: the classifier cannot tell what it reads.
pub(crate) fn normalise(text: &str, dynamic: bool, cwd: &Cwd) -> Vec<NormPath> {
    let mut out = Vec::new();
    for alternative in braces(text) {
        if let Some(path) = normalise_one(&alternative, dynamic, cwd) {
            out.push(path);
        }
    }
    out
}

fn normalise_one(text: &str, dynamic: bool, cwd: &Cwd) -> Option<NormPath> {
    let (mut path, rest) = if let Some(rest) = text.strip_prefix('/') {
        (NormPath::start(Anchor::Root), rest)
    } else if let Some((user, rest)) = tilde(text) {
        match user {
            "" => (NormPath::start(Anchor::Home), rest),
            "root" => {
                let mut path = NormPath::start(Anchor::Root);
                path.push("root", false);
                (path, rest)
            }
            user => {
                let mut path = NormPath::start(Anchor::Root);
                path.push("home", false);
                path.push(user, false);
                (path, rest)
            }
        }
    } else if let Some(rest) = dynamic.then(|| home_variable(text)).flatten() {
        (NormPath::start(Anchor::Home), rest)
    } else if dynamic && is_expansion(text.split('/').next().unwrap_or_default()) {
        let (_, rest) = text.split_once('/')?;
        (NormPath::start(Anchor::Unknown), rest)
    } else {
        (cwd.path.clone(), text)
    };
    for component in rest.split('/') {
        path.push(component, dynamic);
    }
    Some(path)
}

/// `~` or `~user` at the start of a word, and the rest after its `/`.
fn tilde(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('~')?;
    let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let plain = user
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    plain.then_some((user, tail))
}

/// `$HOME/...` or `${HOME}/...`: the rest after the variable.
fn home_variable(text: &str) -> Option<&str> {
    for var in ["$HOME", "${HOME}", "\"$HOME\""] {
        if let Some(rest) = text.strip_prefix(var)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return Some(rest);
        }
    }
    None
}

/// Whether a component holds an expansion (its value is known only at run time).
fn is_expansion(component: &str) -> bool {
    component.contains('$') || component.contains('`')
}

/// Brace expansion (`/etc/{shadow,passwd}`), which bash does and POSIX sh does not: both
/// readings count.
fn braces(text: &str) -> Vec<String> {
    let mut out = vec![text.to_owned()];
    let mut done = Vec::new();
    while let Some(word) = out.pop() {
        match split_brace(&word) {
            Some((head, alternatives, tail)) if done.len() + out.len() < MAX_ALTERNATIVES => {
                for alternative in alternatives {
                    out.push(format!("{head}{alternative}{tail}"));
                }
            }
            _ => done.push(word),
        }
    }
    if done.len() > 1 {
        done.push(text.to_owned());
    }
    done
}

/// The first `{a,b}` group of a word: what comes before, its alternatives, what follows.
fn split_brace(word: &str) -> Option<(&str, Vec<&str>, &str)> {
    let open = word.find('{')?;
    let mut depth = 0usize;
    let mut commas = Vec::new();
    for (idx, c) in word[open..].char_indices() {
        let at = open + idx;
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    if commas.is_empty() {
                        return None;
                    }
                    let mut parts = Vec::with_capacity(commas.len() + 1);
                    let mut from = open + 1;
                    for comma in commas {
                        parts.push(&word[from..comma]);
                        from = comma + 1;
                    }
                    parts.push(&word[from..at]);
                    return Some((&word[..open], parts, &word[at + 1..]));
                }
            }
            ',' if depth == 1 => commas.push(at),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{Cwd, normalise};

    fn shown(text: &str, dynamic: bool) -> Vec<String> {
        normalise(text, dynamic, &Cwd::login())
            .iter()
            .map(|p| p.display())
            .collect()
    }

    #[test]
    fn paths_are_normalised_as_the_kernel_walks_them() {
        assert_eq!(shown("/etc/./shadow", false), ["/etc/shadow"]);
        assert_eq!(shown("/etc//shadow", false), ["/etc/shadow"]);
        assert_eq!(shown("/tmp/../etc/shadow", false), ["/etc/shadow"]);
        assert_eq!(shown("/../../etc/shadow", false), ["/etc/shadow"]);
        assert_eq!(shown("~root/.ssh/id_rsa", false), ["/root/.ssh/id_rsa"]);
        assert_eq!(shown("~bob/.ssh/id_rsa", false), ["/home/bob/.ssh/id_rsa"]);
        assert_eq!(shown("$HOME/.ssh/id_rsa", true), ["~/.ssh/id_rsa"]);
        assert_eq!(
            shown("${HOME}/.aws/credentials", true),
            ["~/.aws/credentials"]
        );
        assert_eq!(shown(".ssh/id_rsa", false), ["~/.ssh/id_rsa"]);
        assert_eq!(shown("../../etc/shadow", false), [".../etc/shadow"]);
        assert_eq!(shown("$X/.ssh/id_rsa", true), [".../.ssh/id_rsa"]);
        assert_eq!(shown("/proc/$PID/environ", true), ["/proc/$PID/environ"]);
        assert!(shown("$X", true).is_empty());
    }

    #[test]
    fn braces_give_every_alternative_and_the_word_as_written() {
        assert_eq!(
            shown("/etc/{passwd,shadow}", false),
            ["/etc/shadow", "/etc/passwd", "/etc/{passwd,shadow}"]
        );
    }

    #[test]
    fn cd_moves_the_directory_relative_paths_start_from() {
        let mut cwd = Cwd::login();
        cwd.change(Some(("/etc", false)));
        let found: Vec<String> = normalise("./shadow", false, &cwd)
            .iter()
            .map(|p| p.display())
            .collect();
        assert_eq!(found, ["/etc/shadow"]);
        cwd.change(Some(("$X", true)));
        let found: Vec<String> = normalise("shadow", false, &cwd)
            .iter()
            .map(|p| p.display())
            .collect();
        assert_eq!(found, [".../shadow"]);
    }
}
