//! The per-program vocabulary: which programs, subcommands and flags read, change or destroy.
//!
//! `classify` dispatches on the program name. A program that is not listed here is unknown
//! and never read-only (CLASSIFY-1). Each module covers one family of programs.

pub(crate) mod builtins;
pub(crate) mod containers;
pub(crate) mod env;
pub(crate) mod files;
pub(crate) mod git;
pub(crate) mod net;
pub(crate) mod options;
pub(crate) mod packages;
pub(crate) mod paths;
pub(crate) mod proxmox;
pub(crate) mod reach;
pub(crate) mod reads;
pub(crate) mod sed;
pub(crate) mod setters;
pub(crate) mod sql;
pub(crate) mod storage;
pub(crate) mod system;
pub(crate) mod text;

use super::opts::{Opts, Spec};
use super::walk::{Arg, Cx, Subject};
use crate::class::CommandClass;

/// Programs that only read, whatever their arguments.
const READERS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "zcat",
    "bzcat",
    "xzcat",
    "zstdcat",
    "zless",
    "rg",
    "ls",
    "dir",
    "vdir",
    "ll",
    "wc",
    "echo",
    "printf",
    "du",
    "df",
    "stat",
    "file",
    "readlink",
    "realpath",
    "basename",
    "dirname",
    "test",
    "[",
    "true",
    "false",
    ":",
    "id",
    "whoami",
    "groups",
    "users",
    "who",
    "w",
    "last",
    "lastlog",
    "lastb",
    "which",
    "whereis",
    "type",
    "pwd",
    "cut",
    "tr",
    "nl",
    "tac",
    "rev",
    "fold",
    "fmt",
    "paste",
    "join",
    "comm",
    "diff",
    "cmp",
    "od",
    "hexdump",
    "strings",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "base64",
    "base32",
    "less",
    "more",
    "jq",
    "column",
    "expand",
    "unexpand",
    "seq",
    "expr",
    "yes",
    "sleep",
    "getent",
    "dig",
    "host",
    "nslookup",
    "ping",
    "ping6",
    "traceroute",
    "tracepath",
    "mtr",
    "lsblk",
    "blkid",
    "findmnt",
    "free",
    "uptime",
    "uname",
    "arch",
    "nproc",
    "lscpu",
    "lsmem",
    "lspci",
    "lsusb",
    "lsmod",
    "lsof",
    "lsattr",
    "lsns",
    "lslocks",
    "lsipc",
    "lshw",
    "dmidecode",
    "vmstat",
    "iostat",
    "mpstat",
    "pidstat",
    "sar",
    "ps",
    "pgrep",
    "pidof",
    "pstree",
    "top",
    "htop",
    "atop",
    "iotop",
    "sensors",
    "tree",
    "printenv",
    "locale",
    "tty",
    "cal",
    "bc",
    "tput",
    "getconf",
    "netstat",
    "whois",
    "man",
    "info",
    "apropos",
    "whatis",
    "tldr",
    "lslogins",
    "systemd-cgls",
    "systemd-cgtop",
    "systemd-detect-virt",
    "virt-what",
    "hostid",
    "logname",
    "mountpoint",
    "numfmt",
    "factor",
    "shuf",
    "look",
    "xmllint",
    "yamllint",
    "shellcheck",
    "pveversion",
    "lxc-ls",
    "lxc-info",
    "lxc-config",
    "lvs",
    "vgs",
    "pvs",
    "lvdisplay",
    "vgdisplay",
    "pvdisplay",
    "lvscan",
    "vgscan",
    "pvscan",
    "arcstat",
    "arc_summary",
    "zdb",
    "iftop",
    "nethogs",
    "bmon",
    "ncdu",
    "dust",
    "duf",
    "btop",
    "glances",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "let",
    "shift",
    "exit",
    "return",
    "break",
    "continue",
    "wait",
    "jobs",
    "getopts",
    "help",
    "times",
    "logout",
    "disown",
    "fg",
    "bg",
    "caller",
];

/// Readers whose verdict holds whatever their arguments expand to at run time.
const DYNAMIC_SAFE: &[&str] = &[
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "zcat",
    "rg",
    "ls",
    "wc",
    "echo",
    "printf",
    "du",
    "df",
    "stat",
    "file",
    "readlink",
    "realpath",
    "basename",
    "dirname",
    "test",
    "[",
    "true",
    "false",
    ":",
    "id",
    "which",
    "type",
    "pwd",
    "cut",
    "tr",
    "nl",
    "tac",
    "rev",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "base64",
    "less",
    "more",
    "jq",
    "getent",
    "dig",
    "host",
    "nslookup",
    "ping",
    "pgrep",
    "pidof",
    "sleep",
    "read",
    "cd",
    "export",
    "local",
    "declare",
    "unset",
    "set",
    "exit",
    "return",
    "diff",
    "cmp",
    "strings",
    "column",
    "seq",
    "expr",
    "lsblk",
    "findmnt",
    "mountpoint",
    "ps",
    "shift",
    "wait",
];

/// Options (matched as prefixes of an argument) that make a reader write or change state.
const WRITING_OPTIONS: &[(&str, &[&str])] = &[
    ("tree", &["-o"]),
    ("dmidecode", &["--dump-bin"]),
    ("lshw", &["-dump"]),
    ("file", &["-C", "--compile"]),
    ("sar", &["-o"]),
    ("shuf", &["-o", "--output"]),
    ("xmllint", &["--output"]),
    ("atop", &["-w"]),
    ("ncdu", &["-o"]),
    ("tldr", &["-u", "--update"]),
    ("less", &["-o", "-O", "--log-file", "--LOG-FILE"]),
    ("sensors", &["-s", "--set"]),
    ("top", &["-w"]),
];

/// The first argument of a reader that makes it write, if any.
fn writing_option<'a>(program: &str, args: &[Arg<'a>]) -> Option<&'a str> {
    let (_, options) = WRITING_OPTIONS.iter().find(|(name, _)| *name == program)?;
    args.iter()
        .map(|arg| arg.text)
        .find(|text| options.iter().any(|option| text.starts_with(option)))
}

/// Whether `program` is one of the plain readers.
pub(crate) fn is_reader(program: &str) -> bool {
    READERS.contains(&program)
}

/// Whether `program`'s read-only verdict survives arguments that are only known at run time.
pub(crate) fn ignores_dynamic_args(program: &str) -> bool {
    DYNAMIC_SAFE.contains(&program)
}

/// Classifies one command (`args[0]` is the program, already known not to be a path).
pub(crate) fn classify(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    builtins::evaluation_contexts(cx, args);
    if builtins::run(cx, args)
        || env::run(cx, args)
        || files::run(cx, args)
        || text::run(cx, args)
        || setters::run(cx, args)
        || system::run(cx, args)
        || containers::run(cx, args)
        || packages::run(cx, args)
        || storage::run(cx, args)
        || proxmox::run(cx, args)
        || net::run(cx, args)
        || git::run(cx, args)
        || sql::run(cx, args)
    {
        return;
    }
    if READERS.contains(&program) {
        match writing_option(program, &args[1..]) {
            Some(option) => {
                let predicate = format!("writes or changes something (`{option}`)");
                cx.mutation(program, &predicate);
            }
            None => cx.read_only(program, "only reads"),
        }
        return;
    }
    // A network client no other rule reads (`nc`, `scp`) is known by its row in the table,
    // which the walk applies to every command (CLASSIFY-9).
    if reach::is_client(program) {
        return;
    }
    cx.report(CommandClass::ConfigMutation, Subject::Unknown(program), "");
}

/// The class of each subcommand of a program; unlisted subcommands change state.
pub(crate) struct Verbs {
    /// Subcommands that only read.
    pub read_only: &'static [&'static str],
    /// Subcommands that destroy data or take something down.
    pub destructive: &'static [&'static str],
    /// What a destructive subcommand does, for the reason.
    pub destroys: &'static str,
}

impl Verbs {
    /// The class of `verb`.
    pub(crate) fn class_of(&self, verb: &str) -> CommandClass {
        if self.read_only.contains(&verb) {
            CommandClass::ReadOnly
        } else if self.destructive.contains(&verb) {
            CommandClass::Destructive
        } else {
            CommandClass::ConfigMutation
        }
    }

    /// Reports the class of `program verb`.
    pub(crate) fn report(&self, cx: &mut Cx<'_, '_, '_, '_>, program: &str, verb: &str) {
        let class = self.class_of(verb);
        let predicate = match class {
            CommandClass::ReadOnly => "only reads",
            CommandClass::ConfigMutation => "changes state",
            CommandClass::Destructive => self.destroys,
        };
        cx.report(class, Subject::Command(program, verb), predicate);
    }
}

/// `program [global options] verb ...`: finds the verb and classifies it by table;
/// `bare` is the class (and predicate) when no verb is given.
pub(crate) fn by_verb<'a>(
    cx: &mut Cx<'_, '_, '_, '_>,
    args: &[Arg<'a>],
    spec: &Spec,
    verbs: &Verbs,
    bare: (CommandClass, &str),
) -> Option<(usize, &'a str)> {
    let program = args[0].text;
    let (_, at) = Opts::leading(&args[1..], spec);
    match args.get(at + 1) {
        Some(verb) => {
            verbs.report(cx, program, verb.text);
            Some((at + 1, verb.text))
        }
        None => {
            cx.report(bare.0, Subject::Word(program), bare.1);
            None
        }
    }
}
