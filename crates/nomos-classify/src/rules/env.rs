//! Wrappers that run another command (`sudo`, `env`, `timeout`, `xargs`, ...), shells that
//! run a script (`bash -c`, `... | sh`, `ssh host CMD`, `eval`), and interpreters.

use super::super::opts::{Opt, Opts, Spec};
use super::super::walk::{Arg, Cx, Environment, Stdin, Subject};
use crate::class::CommandClass;
use crate::grammar::Grammar;
use crate::shell::Shell;

/// A shell whose grammar is not known: a login shell (`ssh HOST CMD`, `su -c`), `$SHELL`
/// (`flock -c`) or `/bin/sh` (`watch`) is read in every modelled grammar (CLASSIFY-8).
const ANY_SHELL: Shell = Shell::Sh;

/// Shells whose scripts the classifier reads.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "busybox", "fish", "csh", "tcsh",
];

/// Interpreters of other languages: their code is never read.
pub(crate) const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "perl",
    "ruby",
    "irb",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "Rscript",
    "tclsh",
    "wish",
    "pwsh",
    "powershell",
    "osascript",
    "groovy",
    "java",
    "jshell",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "expect",
    "guile",
];

/// Programs that run another command given in their arguments.
pub(crate) const WRAPPERS: &[&str] = &[
    "sudo",
    "doas",
    "su",
    "runuser",
    "env",
    "ssh",
    "eval",
    "exec",
    "command",
    "builtin",
    "time",
    "timeout",
    "nice",
    "ionice",
    "nohup",
    "coproc",
    "xargs",
    "stdbuf",
    "setsid",
    "chroot",
    "flock",
    "nsenter",
    "unshare",
    "systemd-nspawn",
    "watch",
    "unbuffer",
    "systemd-run",
    "source",
    ".",
    "trap",
];

/// Whether assigning variable `name` can change which program runs or what it executes.
pub(crate) fn changes_program(name: &str) -> bool {
    matches!(
        name,
        "PATH"
            | "IFS"
            | "ENV"
            | "BASH_ENV"
            | "SHELLOPTS"
            | "BASHOPTS"
            | "PS4"
            | "PROMPT_COMMAND"
            | "PAGER"
            | "MANPAGER"
            | "SYSTEMD_PAGER"
            | "EDITOR"
            | "VISUAL"
            | "LESSOPEN"
            | "LESSCLOSE"
            | "PYTHONSTARTUP"
            | "PYTHONPATH"
            | "PERL5OPT"
            | "PERL5LIB"
            | "NODE_OPTIONS"
            | "RUBYOPT"
            | "SUDO_ASKPASS"
            | "SSH_ASKPASS"
            | "SUDO_EDITOR"
            | "SYSTEMD_EDITOR"
            | "SYSTEMD_LESS"
            | "FCEDIT"
            | "PS0"
            | "PS1"
            | "PS2"
            | "PS3"
            | "BASH_XTRACEFD"
            | "BASH_LOADABLES_PATH"
            | "FPATH"
            | "ZDOTDIR"
            | "HOME"
            | "XDG_CONFIG_HOME"
            | "LESS"
            | "LESSKEY"
            | "LESSKEYIN"
            | "LESSEDIT"
            | "MANOPT"
            | "BROWSER"
            | "TAR_OPTIONS"
            | "TAPE"
            | "RSH"
            | "RSYNC_RSH"
            | "RSYNC_CONNECT_PROG"
            | "RSYNC_PROXY"
            | "RIPGREP_CONFIG_PATH"
            | "PSQLRC"
            | "MYSQL_HOME"
            | "CURL_HOME"
            | "WGETRC"
            | "SHELL"
            | "TERMINFO"
            | "INPUTRC"
            | "DOCKER_CONFIG"
            | "KUBECONFIG"
            | "SSH_AUTH_SOCK"
            | "BASH_ALIASES"
            | "BASH_CMDS"
            | "BASH_COMPAT"
            | "EXECIGNORE"
            | "GLOBIGNORE"
            | "TMOUT"
    ) || name.starts_with("LD_")
        || name.starts_with("GIT_")
        || name.starts_with("DYLD_")
        || name.starts_with("BASH_FUNC_")
}

/// Handles the wrappers and shells; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    match program {
        "sudo" | "doas" => sudo(cx, args),
        "env" => env(cx, args),
        "timeout" => {
            let spec = Spec {
                short_values: "ks",
                long_values: &["kill-after", "signal"],
            };
            let (_, at) = Opts::leading(&args[1..], &spec);
            inner(cx, args, at + 2, "prints its usage");
        }
        "nice" => {
            let spec = Spec {
                short_values: "n",
                long_values: &["adjustment"],
            };
            let (_, at) = Opts::leading(&args[1..], &spec);
            inner(cx, args, at + 1, "prints the niceness");
        }
        "ionice" => {
            let spec = Spec {
                short_values: "cnpPu",
                long_values: &["class", "classdata", "pid", "pgid", "uid"],
            };
            let (opts, at) = Opts::leading(&args[1..], &spec);
            let targets = opts.short('p') || opts.short('P') || opts.short('u') || opts.long("pid");
            if targets && (opts.short('c') || opts.short('n')) {
                cx.mutation(program, "changes the I/O priority of running processes");
            } else {
                inner(cx, args, at + 1, "prints the I/O priority");
            }
        }
        "builtin" => {
            // CLASSIFY-6: `builtin` bypasses functions; it is never read-only.
            cx.mutation(program, "runs a builtin past any function of that name");
            let (_, at) = Opts::leading(&args[1..], &Spec::FLAGS_ONLY);
            inner(cx, args, at + 1, "runs nothing");
        }
        // bash's `coproc CMD` runs CMD beside the shell (in dash `coproc` is a program name,
        // which the dash reading finds unknown).
        "coproc" if cx.grammar() == Grammar::Bash => inner(cx, args, 1, "runs nothing"),
        "coproc" => return false,
        "nohup" | "setsid" | "unbuffer" => {
            let (_, at) = Opts::leading(&args[1..], &Spec::FLAGS_ONLY);
            inner(cx, args, at + 1, "runs nothing");
        }
        "exec" => {
            let spec = Spec {
                short_values: "a",
                long_values: &[],
            };
            let (_, at) = Opts::leading(&args[1..], &spec);
            // CLASSIFY-6: `exec` replaces the shell or rewires its descriptors for good.
            let predicate = if args.len() > at + 1 {
                "replaces the shell with the command"
            } else {
                "changes the shell's open files"
            };
            cx.mutation(program, predicate);
            inner(cx, args, at + 1, "only applies its redirections");
        }
        "command" => {
            let (opts, at) = Opts::leading(&args[1..], &Spec::FLAGS_ONLY);
            let odd = opts.items.iter().find_map(|item| match item {
                Opt::Short('v' | 'V' | 'p', _) => None,
                Opt::Short(c, _) => Some(format!("-{c}")),
                Opt::Long(name, _) => Some(format!("--{name}")),
                Opt::Positional(_) => None,
            });
            if let Some(option) = odd {
                let predicate =
                    format!("has option `{option}`, which is not known to be read-only");
                cx.mutation(program, &predicate);
            }
            if opts.short('v') || opts.short('V') {
                cx.read_only(program, "only looks a command up");
            } else {
                inner(cx, args, at + 1, "runs nothing");
            }
        }
        "time" => {
            let spec = Spec {
                short_values: "of",
                long_values: &["output", "format"],
            };
            let (opts, at) = Opts::leading(&args[1..], &spec);
            if opts.either('o', "output") {
                cx.mutation(program, "writes its report to a file");
            }
            inner(cx, args, at + 1, "runs nothing");
        }
        "stdbuf" => {
            let spec = Spec {
                short_values: "ioe",
                long_values: &["input", "output", "error"],
            };
            let (_, at) = Opts::leading(&args[1..], &spec);
            inner(cx, args, at + 1, "runs nothing");
        }
        "chroot" => {
            let spec = Spec {
                short_values: "",
                long_values: &["userspec", "groups"],
            };
            let (_, at) = Opts::leading(&args[1..], &spec);
            other_root(cx, args, at + 2, "another root");
        }
        "nsenter" => {
            // Only these take a separate value; `-m`, `-n`, `-r`, `-w`... take an optional
            // one that must be attached (`-n/proc/1/ns/net`, `--net=FILE`).
            let spec = Spec {
                short_values: "tSG",
                long_values: &["target", "setuid", "setgid"],
            };
            let (_, at) = Opts::leading(&args[1..], &spec);
            other_root(cx, args, at + 1, "another process's namespaces");
        }
        "unshare" => {
            let spec = Spec {
                short_values: "SGRwl",
                long_values: &[
                    "setuid",
                    "setgid",
                    "root",
                    "wd",
                    "propagation",
                    "setgroups",
                    "map-user",
                    "map-group",
                    "map-users",
                    "map-groups",
                    "load-interp",
                ],
            };
            let (_, at) = Opts::leading(&args[1..], &spec);
            other_root(cx, args, at + 1, "new namespaces");
        }
        "systemd-nspawn" => {
            cx.mutation(program, "boots or runs a program of a container's root");
        }
        "flock" => flock(cx, args),
        "xargs" => xargs(cx, args),
        "watch" => {
            let spec = Spec {
                short_values: "nq",
                long_values: &["interval"],
            };
            let (opts, at) = Opts::leading(&args[1..], &spec);
            if opts.either('x', "exec") {
                inner(cx, args, at + 1, "runs nothing");
            } else {
                let joined = join(&args[(at + 1).min(args.len())..]);
                if joined.trim().is_empty() {
                    cx.read_only(program, "runs nothing");
                } else {
                    cx.script_in(&joined, program, ANY_SHELL.grammars());
                }
            }
        }
        "systemd-run" => {
            let spec = Spec {
                short_values: "upEMHs",
                long_values: &[
                    "unit",
                    "property",
                    "setenv",
                    "slice",
                    "description",
                    "machine",
                    "host",
                    "uid",
                    "gid",
                    "working-directory",
                ],
            };
            let (_, at) = Opts::leading(&args[1..], &spec);
            cx.mutation(program, "starts a transient systemd unit");
            inner(cx, args, at + 1, "runs nothing");
        }
        "su" | "runuser" => su(cx, args),
        "ssh" => ssh(cx, args),
        "eval" => {
            // CLASSIFY-6: `eval` is never read-only; what it runs is classified too.
            cx.mutation(program, "runs its arguments as a script");
            let joined = join(&args[1..]);
            script_or_nothing(cx, program, &joined);
        }
        "alias" => {
            let definitions: Vec<&str> = args[1..]
                .iter()
                .filter_map(|arg| arg.text.split_once('='))
                .map(|(_, value)| value)
                .collect();
            if definitions.is_empty() {
                cx.read_only(program, "only lists aliases");
            }
            for value in definitions {
                cx.mutation(
                    program,
                    "defines an alias, which changes what a later word runs",
                );
                cx.script_without_input(value, program);
            }
        }
        "source" | "." => cx.mutation(program, "runs a script file the classifier cannot read"),
        "trap" => match args.get(1).map(|arg| arg.text) {
            None | Some("-l" | "-p" | "-" | "") => cx.read_only(program, "only lists traps"),
            Some(action) => {
                cx.mutation(program, "sets a trap, which runs code later");
                cx.script_without_input(action, program);
            }
        },
        "busybox" => busybox(cx, args),
        _ if SHELLS.contains(&program) => shell(cx, args, Shell::grammars_of_program(program)),
        _ if INTERPRETERS.contains(&program) && !program.ends_with("awk") => interpreter(cx, args),
        _ => return false,
    }
    true
}

/// CLASSIFY-8: `chroot DIR prog`, `nsenter`, `unshare` run a program of another root or
/// namespace, which may not be the program the classifier knows by that name: never
/// `read_only`; the command is classified too, so a destructive one stays destructive.
pub(crate) fn other_root(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>], at: usize, place: &str) {
    let program = args[0].text;
    match args.get(at..).filter(|rest| !rest.is_empty()) {
        Some(rest) => {
            let predicate = format!("runs a program of {place}, which the classifier cannot know");
            cx.mutation(program, &predicate);
            cx.run(rest);
        }
        None => {
            let predicate = format!("opens a shell in {place}");
            cx.mutation(program, &predicate);
        }
    }
}

/// Classifies `args[at..]` as the wrapped command, or reports `bare` when there is none.
fn inner(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>], at: usize, bare: &str) {
    inner_in(cx, args, at, bare, Environment::Pinned);
}

/// [`inner`] for a wrapper that runs the command in `environment`: `Dropped` when the
/// wrapper clears or resets the environment (CLASSIFY-9), `Pinned` when it passes its own.
fn inner_in(
    cx: &mut Cx<'_, '_, '_, '_>,
    args: &[Arg<'_>],
    at: usize,
    bare: &str,
    environment: Environment,
) {
    let program = args[0].text;
    if let Some(arg) = args[1..at.min(args.len())].iter().find(|arg| arg.dynamic) {
        let predicate = format!("has an option known only at run time (`{}`)", arg.text);
        cx.mutation(program, &predicate);
    }
    match args.get(at..) {
        Some(rest) if !rest.is_empty() && environment == Environment::Dropped => {
            cx.run_without_pinned_environment(rest);
        }
        Some(rest) if !rest.is_empty() => cx.run(rest),
        _ => cx.read_only(program, bare),
    }
}

fn sudo(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "CDgpRrtTUuh",
        long_values: &[
            "chdir",
            "close-from",
            "group",
            "prompt",
            "chroot",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "user",
            "host",
        ],
    };
    let (opts, mut at) = Opts::leading(&args[1..], &spec);
    at += 1;
    while args
        .get(at)
        .is_some_and(|arg| arg.text.contains('=') && !arg.text.starts_with('='))
    {
        let name = args[at].text.split('=').next().unwrap_or_default();
        if !super::super::ast::is_name(name) {
            break;
        }
        if changes_program(name) {
            cx.mutation(
                name,
                "is set for the command, which changes what programs run",
            );
        }
        // CLASSIFY-8: a bash the command starts may evaluate the value as arithmetic.
        cx.evaluated_by_child(args[at].text, name);
        at += 1;
    }
    if opts.either('l', "list") || opts.either('V', "version") {
        cx.read_only(program, "only lists privileges");
        return;
    }
    if opts.either('e', "edit") {
        cx.mutation(program, "edits files");
        return;
    }
    if opts.either('R', "chroot") {
        // CLASSIFY-8: the command is another root's program of that name.
        cx.mutation(program, "runs a program of another root (-R)");
    }
    if args.len() <= at {
        if opts.either('s', "shell") || opts.either('i', "login") {
            cx.mutation(program, "opens a root shell");
        } else {
            cx.read_only(program, "runs nothing");
        }
        return;
    }
    // CLASSIFY-9: `sudo` resets the environment (`env_reset`) unless told to keep it, and
    // `doas` always does, so the command runs without the pinned variables.
    let keeps = program == "sudo" && (opts.short('E') || opts.long("preserve-env"));
    let environment = if keeps {
        Environment::Pinned
    } else {
        Environment::Dropped
    };
    inner_in(cx, args, at, "runs nothing", environment);
}

fn env(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "uCS",
        long_values: &["unset", "chdir", "split-string"],
    };
    let (opts, mut at) = Opts::leading(&args[1..], &spec);
    at += 1;
    for item in &opts.items {
        let unset = match item {
            Opt::Short('u', value) | Opt::Long("unset", value) => value.unwrap_or_default(),
            _ => continue,
        };
        if changes_program(unset) {
            cx.mutation(
                unset,
                "is unset for the command, which changes what programs run or how",
            );
        }
    }
    // CLASSIFY-9: `env -i` starts the command without any variable, the pinned ones too.
    let environment = if opts.either('i', "ignore-environment") {
        Environment::Dropped
    } else {
        Environment::Pinned
    };
    while let Some(arg) = args.get(at) {
        let Some((name, _)) = arg.text.split_once('=') else {
            break;
        };
        if !super::super::ast::is_name(name) {
            break;
        }
        if changes_program(name) {
            cx.mutation(
                name,
                "is set for the command, which changes what programs run",
            );
        }
        // CLASSIFY-8: a bash the command starts may evaluate the value as arithmetic.
        cx.evaluated_by_child(arg.text, name);
        at += 1;
    }
    if let Some(split) = opts.short_value('S').or(opts.long_value("split-string")) {
        let mut text = split.to_owned();
        for arg in &args[at..] {
            text.push(' ');
            text.push_str(arg.text);
        }
        cx.script(&text, program);
        return;
    }
    inner_in(cx, args, at, "prints the environment", environment);
}

fn flock(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "wEc",
        long_values: &["timeout", "conflict-exit-code", "command"],
    };
    let (opts, at) = Opts::leading(&args[1..], &spec);
    // `flock FILE ...` opens FILE with `O_CREAT`: a lock file that is missing is created
    // (found by the execution oracle, CLASSIFY-9). `flock FD` locks an open descriptor.
    if let Some(lock) = args.get(at + 1)
        && (lock.dynamic || !lock.text.chars().all(|c| c.is_ascii_digit()))
    {
        let predicate = format!("creates its lock file `{}` when it is missing", lock.text);
        cx.mutation(program, &predicate);
    }
    if let Some(command) = opts.short_value('c').or(opts.long_value("command")) {
        cx.script_in(command, program, ANY_SHELL.grammars());
        return;
    }
    let rest = &args[(at + 2).min(args.len())..];
    if let Some(Arg {
        text: "-c" | "--command",
        ..
    }) = rest.first()
    {
        match rest.get(1) {
            Some(command) => cx.script_in(command.text, program, ANY_SHELL.grammars()),
            None => cx.read_only(program, "runs nothing"),
        }
        return;
    }
    inner(cx, args, at + 2, "only takes a lock");
}

fn xargs(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "adEILnPs",
        long_values: &[
            "arg-file",
            "delimiter",
            "eof",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
    };
    let (opts, at) = Opts::leading(&args[1..], &spec);
    let replace = match opts.short_value('I') {
        Some(text) => Some(text),
        None if opts.short('i') || opts.long("replace") => {
            Some(opts.long_value("replace").unwrap_or("{}"))
        }
        None => None,
    };
    let Some(rest) = args.get(at + 1..).filter(|rest| !rest.is_empty()) else {
        cx.read_only(program, "echoes its input");
        return;
    };
    // Each item read from the input becomes an argument known only at run time.
    let mut inner: Vec<Arg<'_>> = rest
        .iter()
        .map(|arg| match replace {
            Some(marker) if !marker.is_empty() && arg.text.contains(marker) => {
                Arg::dynamic(arg.text)
            }
            _ => *arg,
        })
        .collect();
    // SECRET-1: input known before the run (`echo /etc/shadow | xargs cat`, `<<<`) names
    // the paths the inner command reads.
    if let Stdin::Text(input) = cx.stdin() {
        let items: Vec<&str> = input.split_whitespace().take(16).collect();
        let mut named: Vec<Arg<'_>> = Vec::new();
        match replace {
            Some(marker) if !marker.is_empty() => {
                let owned: Vec<String> = items
                    .iter()
                    .flat_map(|item| rest.iter().map(move |arg| arg.text.replace(marker, item)))
                    .collect();
                let args: Vec<Arg<'_>> = owned.iter().map(|text| Arg::literal(text)).collect();
                for chunk in args.chunks(rest.len()) {
                    cx.secret_reads(chunk);
                }
            }
            _ => {
                named.extend(rest.iter().copied());
                named.extend(items.iter().map(|item| Arg::literal(item)));
                cx.secret_reads(&named);
            }
        }
    }
    if replace.is_none() {
        inner.push(Arg::dynamic("(input)"));
    }
    cx.run_with_input(&inner, &Stdin::Empty);
}

fn su(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    if program == "su" {
        // Traced, `su` runs PAM's helpers (`unix_chkpwd`), programs the command
        // does not name; the command it runs is classified too.
        cx.mutation(
            program,
            "switches user through PAM, which runs its helper programs",
        );
    }
    let spec = Spec {
        short_values: "cgGsuw",
        long_values: &[
            "command",
            "group",
            "supp-group",
            "shell",
            "user",
            "whitelist-environment",
        ],
    };
    let (opts, at) = Opts::leading(&args[1..], &spec);
    // `su` takes options after the user name too (`su postgres -c '...'`).
    let all = Opts::parse(&args[1..], &spec);
    if let Some(command) = all.short_value('c').or(all.long_value("command")) {
        cx.script_in(command, program, ANY_SHELL.grammars());
        return;
    }
    // `runuser -u user -- cmd` runs the command directly.
    if program == "runuser" && opts.either('u', "user") && args.len() > at + 1 {
        cx.run(&args[at + 1..]);
        return;
    }
    cx.mutation(program, "opens a shell as another user");
}

/// `busybox sh ...` is ash; `busybox APPLET ...` runs the applet of that name.
fn busybox(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    match args.get(1) {
        Some(applet) if matches!(applet.text, "sh" | "ash" | "hush") && !applet.dynamic => {
            shell(cx, &args[1..], Shell::Busybox.grammars());
        }
        Some(applet) if !applet.text.starts_with('-') => {
            if applet.text == "diff"
                && let Some(input) = super::text::busybox_diff_copies(&args[2..])
            {
                cx.mutation("busybox diff", &super::text::busybox_diff_predicate(input));
            }
            cx.run(&args[1..]);
        }
        _ => cx.read_only(args[0].text, "only lists its applets"),
    }
}

/// `sh -c SCRIPT`, `bash -s < file`, `... | sh`: the script is read in `grammars`.
fn shell(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>], grammars: &[Grammar]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "oO",
        long_values: &["rcfile", "init-file"],
    };
    let (opts, at) = Opts::leading(&args[1..], &spec);
    if opts.long("version") || opts.long("help") {
        cx.read_only(program, "only prints its version");
        return;
    }
    let first = args.get(at + 1);
    if opts.short('c') {
        match first {
            Some(script) => {
                cx.read_only(program, "runs the script given with -c");
                cx.script_in(script.text, program, grammars);
            }
            None => cx.read_only(program, "runs nothing"),
        }
        return;
    }
    if let Some(file) = first.filter(|_| !opts.short('s')) {
        let predicate = format!(
            "runs script file `{}`, which the classifier cannot read",
            file.text
        );
        cx.mutation(program, &predicate);
        return;
    }
    match cx.stdin() {
        Stdin::Text(text) => {
            cx.read_only(program, "runs the script on its input");
            // The script's commands read what is left of that input: nothing known.
            cx.script_without_input_in(&text, program, grammars);
        }
        Stdin::Pipe(producer) => {
            let predicate =
                format!("runs a script piped from `{producer}`, which the classifier cannot read");
            cx.report(
                CommandClass::Destructive,
                Subject::Word(program),
                &predicate,
            );
        }
        Stdin::File => cx.mutation(program, "runs a script file the classifier cannot read"),
        Stdin::Empty => cx.mutation(program, "starts an interactive shell"),
    }
}

fn interpreter(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let version_only =
        args.len() == 2 && matches!(args[1].text, "--version" | "-V" | "-v" | "version");
    if version_only {
        cx.read_only(program, "only prints its version");
    } else {
        cx.mutation(program, "runs code the classifier does not read");
    }
}

fn ssh(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "BbcDEeFIiJLlmOopQRSWw",
        long_values: &[],
    };
    let (opts, at) = Opts::leading(&args[1..], &spec);
    if opts.short('V') || opts.short('G') || opts.short('Q') {
        cx.read_only(program, "only prints its configuration");
        return;
    }
    if opts.short('O') {
        cx.mutation(program, "controls a master connection");
        return;
    }
    // CLASSIFY-6: options that run a local program, read a config that may, or write.
    if let Some(option) = ssh_unsafe_option(&opts) {
        let predicate = format!("has option `{option}`, which is not known to be read-only");
        cx.mutation(program, &predicate);
    }
    let Some(host) = args.get(at + 1) else {
        cx.read_only(program, "prints its usage");
        return;
    };
    if host.dynamic {
        cx.mutation(program, "connects to a host known only at run time");
    }
    let remote = &args[at + 2..];
    if !remote.is_empty() {
        cx.read_only(program, "runs the remote command");
        // The remote command runs in the remote host's environment, not the pinned one.
        cx.script_without_pinned_environment(&join(remote), program, ANY_SHELL.grammars());
        return;
    }
    if opts.short('L') || opts.short('R') || opts.short('D') || opts.short('N') || opts.short('W') {
        cx.mutation(program, "forwards ports");
        return;
    }
    match cx.stdin() {
        Stdin::Text(text) => {
            cx.read_only(program, "runs its input on the remote host");
            cx.script_without_input_in(&text, program, ANY_SHELL.grammars());
        }
        Stdin::Pipe(producer) => {
            let predicate = format!(
                "runs a script piped from `{producer}` on the remote host, which the classifier cannot read"
            );
            cx.report(
                CommandClass::Destructive,
                Subject::Word(program),
                &predicate,
            );
        }
        Stdin::File | Stdin::Empty => cx.mutation(program, "opens an interactive session"),
    }
}

/// `ssh -o` settings that only tune the connection (no `ProxyCommand`, `LocalCommand`,
/// `KnownHostsCommand`, `Include`, `ControlMaster`, ...).
const SSH_SAFE_SETTINGS: &[&str] = &[
    "connecttimeout",
    "batchmode",
    "stricthostkeychecking",
    "userknownhostsfile",
    "loglevel",
    "serveraliveinterval",
    "serveralivecountmax",
    "connectionattempts",
    "port",
    "user",
    "identityfile",
    "identitiesonly",
    "passwordauthentication",
    "pubkeyauthentication",
    "preferredauthentications",
    "hostkeyalgorithms",
    "compression",
    "addressfamily",
    "requesttty",
    "tcpkeepalive",
    "checkhostip",
    "hostname",
    "numberofpasswordprompts",
    "kbdinteractiveauthentication",
    "gssapiauthentication",
    "visualhostkey",
];

/// The first `ssh` option that is not known to leave the local side alone.
fn ssh_unsafe_option(opts: &Opts<'_>) -> Option<String> {
    opts.items.iter().find_map(|item| match item {
        Opt::Short('o', value) => {
            let value = value.unwrap_or_default();
            let key = value
                .split(['=', ' ', '\t'])
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            (!SSH_SAFE_SETTINGS.contains(&key.as_str())).then(|| format!("-o {value}"))
        }
        Opt::Short(c, _) if "EFMSwWLRDef".contains(*c) => Some(format!("-{c}")),
        Opt::Short(c, _) if !"46AaCgKkNnqsTtVvXxYyBbcIiJlmpPQ".contains(*c) => {
            Some(format!("-{c}"))
        }
        Opt::Long(name, _) => Some(format!("--{name}")),
        _ => None,
    })
}

/// `eval` and `watch`: the arguments joined by spaces are a script.
fn script_or_nothing(cx: &mut Cx<'_, '_, '_, '_>, program: &str, joined: &str) {
    if joined.trim().is_empty() {
        cx.read_only(program, "runs nothing");
    } else {
        cx.script(joined, program);
    }
}

/// Arguments joined with spaces, as `ssh` and `eval` hand them to a shell.
fn join(args: &[Arg<'_>]) -> String {
    let mut text = String::new();
    for (idx, arg) in args.iter().enumerate() {
        if idx > 0 {
            text.push(' ');
        }
        text.push_str(arg.text);
    }
    text
}
