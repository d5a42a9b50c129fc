//! A small getopt: splits a command's arguments into short options, long options and
//! positional arguments, knowing which options take a value.

use super::walk::Arg;

/// Which options of a program take a value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    /// Short options that take a value (`-o FILE`, `-oFILE`).
    pub short_values: &'static str,
    /// Long options that take a value as the next word (`--output FILE`).
    pub long_values: &'static [&'static str],
}

impl Spec {
    /// A program whose options take no values.
    pub(crate) const FLAGS_ONLY: Spec = Spec {
        short_values: "",
        long_values: &[],
    };
}

/// One parsed option or argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Opt<'a> {
    /// `-x` with its value when it takes one.
    Short(char, Option<&'a str>),
    /// `--name` or `--name=value`.
    Long(&'a str, Option<&'a str>),
    /// A positional argument.
    Positional(Arg<'a>),
}

/// Parsed arguments of one command.
#[derive(Debug, Default)]
pub(crate) struct Opts<'a> {
    /// Options and positionals in order.
    pub items: Vec<Opt<'a>>,
}

impl<'a> Opts<'a> {
    /// Parses `args` (without the program name); options may follow positionals (GNU style).
    pub(crate) fn parse(args: &[Arg<'a>], spec: &Spec) -> Opts<'a> {
        Opts::parse_until(args, spec, Stop::Never).0
    }

    /// Parses options up to the first positional; returns them and the index of that positional.
    pub(crate) fn leading(args: &[Arg<'a>], spec: &Spec) -> (Opts<'a>, usize) {
        Opts::parse_until(args, spec, Stop::AtPositional)
    }

    fn parse_until(args: &[Arg<'a>], spec: &Spec, stop: Stop) -> (Opts<'a>, usize) {
        let mut items = Vec::new();
        let mut idx = 0;
        while idx < args.len() {
            let arg = args[idx];
            let text = arg.text;
            if text == "--" {
                if stop == Stop::AtPositional {
                    return (Opts { items }, idx + 1);
                }
                items.extend(args[idx + 1..].iter().map(|arg| Opt::Positional(*arg)));
                return (Opts { items }, args.len());
            }
            if let Some(long) = text.strip_prefix("--") {
                match long.split_once('=') {
                    Some((name, value)) => items.push(Opt::Long(name, Some(value))),
                    None if spec.long_values.contains(&long) => {
                        let value = args.get(idx + 1).map(|arg| arg.text);
                        items.push(Opt::Long(long, value));
                        idx += 1;
                    }
                    None => items.push(Opt::Long(long, None)),
                }
            } else if text.len() > 1 && text.starts_with('-') {
                let bundle = &text[1..];
                for (at, c) in bundle.char_indices() {
                    if spec.short_values.contains(c) {
                        let rest = &bundle[at + c.len_utf8()..];
                        if rest.is_empty() {
                            items.push(Opt::Short(c, args.get(idx + 1).map(|arg| arg.text)));
                            idx += 1;
                        } else {
                            items.push(Opt::Short(c, Some(rest)));
                        }
                        break;
                    }
                    items.push(Opt::Short(c, None));
                }
            } else {
                if stop == Stop::AtPositional {
                    return (Opts { items }, idx);
                }
                items.push(Opt::Positional(arg));
            }
            idx += 1;
        }
        (Opts { items }, args.len())
    }

    /// Whether short option `c` is present.
    pub(crate) fn short(&self, c: char) -> bool {
        self.items
            .iter()
            .any(|item| matches!(item, Opt::Short(x, _) if *x == c))
    }

    /// The value of short option `c`, if present with one.
    pub(crate) fn short_value(&self, c: char) -> Option<&'a str> {
        self.items.iter().find_map(|item| match item {
            Opt::Short(x, value) if *x == c => *value,
            _ => None,
        })
    }

    /// Whether long option `name` is present.
    pub(crate) fn long(&self, name: &str) -> bool {
        self.items
            .iter()
            .any(|item| matches!(item, Opt::Long(x, _) if *x == name))
    }

    /// The first long option whose name starts with `prefix`.
    pub(crate) fn long_prefixed(&self, prefix: &str) -> Option<&'a str> {
        self.items.iter().find_map(|item| match item {
            Opt::Long(name, _) if name.starts_with(prefix) => Some(*name),
            _ => None,
        })
    }

    /// The value of long option `name`, if present with one.
    pub(crate) fn long_value(&self, name: &str) -> Option<&'a str> {
        self.items.iter().find_map(|item| match item {
            Opt::Long(x, value) if *x == name => *value,
            _ => None,
        })
    }

    /// Whether `-c` or `--name` is present.
    pub(crate) fn either(&self, c: char, name: &str) -> bool {
        self.short(c) || self.long(name)
    }

    /// The positional arguments in order.
    pub(crate) fn positionals(&self) -> impl Iterator<Item = Arg<'a>> + '_ {
        self.items.iter().filter_map(|item| match item {
            Opt::Positional(arg) => Some(*arg),
            _ => None,
        })
    }

    /// The first positional argument's text.
    pub(crate) fn first_positional(&self) -> Option<&'a str> {
        self.positionals().next().map(|arg| arg.text)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Never,
    AtPositional,
}
