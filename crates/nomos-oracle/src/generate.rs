//! The command generator (CLASSIFY-9): commands built from the rules' own option tables
//! (`nomos_classify::option_tables`) and from the shells' constructs, so that options and
//! forms nobody wrote a case for are run too.
//!
//! [`table_commands`] names every reader once with each option its table allows and once
//! with options its table does not list. [`Generator`] draws commands at random from a seed:
//! a base command (a reader with options from its table or outside it, a sed, awk or find
//! program, a git command, a remote-file argument such as `HOST:PATH`, a system reader),
//! wrapped in constructs (quoting, `$(...)`, backticks, lists, pipes, redirections including
//! `>|` `<>` `&>`, here-documents and here-strings, `$'...'`, `[[`, `((`, arithmetic with
//! subscripts, `let`, `printf -v`, `read`, `for`, brace expansion, functions, wrappers such
//! as `env`, `timeout`, `nice`, `sh -c`, `bash -c`, `xargs`), then mutated.

use nomos_classify::option_tables::{self, OptionTable};

use crate::rng::Rng;
use crate::scratch::FILES;

/// Values an option may be given.
const VALUES: &[&str] = &[
    "1",
    "3",
    "notes.txt",
    "x",
    "out.txt",
    "id",
    ",",
    ":",
    "%s",
    "/dev/null",
    "-",
    "+5",
];

/// Long options no reader's table lists: the ones that write or run in some program, and
/// made-up ones.
const UNLISTED_LONG: &[&str] = &[
    "--output=o.txt",
    "--output-file=o.txt",
    "--log-file=l.txt",
    "--pre=id",
    "--exec=id",
    "--in-place",
    "--compile",
    "--dump",
    "--write",
    "--save",
    "--update",
    "--delete",
    "--remove",
    "--to-command=id",
    "--use-compress-program=id",
    "--checkpoint-action=exec=id",
    "--rsh-command=id",
    "--info-script=id",
    "--files0-from=notes.txt",
    "--hostname-bin=id",
    "--pager=id",
    "--editor=id",
    "--zzz",
];

/// Readers of the system that the rules know under their own rule, with arguments.
const SYSTEM_READERS: &[&str] = &[
    "ps aux",
    "ps -ef",
    "uptime",
    "df -h",
    "du -sh .",
    "free -m",
    "id",
    "whoami",
    "uname -a",
    "hostname",
    "hostname -f",
    "ip addr",
    "ip -br link show",
    "ip route show",
    "ss -tlnp",
    "ss -s",
    "lsblk",
    "mount",
    "date",
    "env",
    "printenv PATH",
    "journalctl -n 5 --no-pager",
    "systemctl status ssh",
    "systemctl list-units --no-pager",
    "dpkg -l",
    "dpkg-query -W bash",
    "apt list --installed",
    "apt-cache policy bash",
    "cat /etc/os-release",
    "getent passwd root",
    "stat notes.txt",
    "file notes.txt",
    "wc -l notes.txt",
    "sort data.csv",
    "uniq notes.txt",
    "cut -d, -f1 data.csv",
    "tr a-z A-Z < notes.txt",
    "md5sum notes.txt",
    "sha256sum notes.txt",
    "base64 notes.txt",
    "xxd notes.txt",
    "od -c notes.txt",
    "zcat notes.txt.gz",
    "zgrep alpha notes.txt.gz",
    "tar -tf archive.tar",
    "tar -tzf archive.tar.gz",
    "tar tvf archive.tar",
    "gzip -l notes.txt.gz",
    "diff notes.txt lines.txt",
    "cmp notes.txt lines.txt",
    "jq . config.json",
    "man ls",
    "which ls",
    "type ls",
    "command -v ls",
    "test -f notes.txt",
    "sysctl kernel.hostname",
    "sysctl -a",
    "dmesg",
    "lsmod",
    "lscpu",
    "timedatectl",
    "last",
    "who",
    "w",
    "tree dir",
    "less notes.txt",
    "more notes.txt",
    "head -c 100 /dev/urandom",
    "yes",
    "sleep 0.1",
    "kill -0 $$",
    "kill -l",
    "ulimit -n",
    "umask",
    "set",
    "export",
    "readlink -f notes.txt",
    "realpath notes.txt",
];

/// Commands that change something, so the generator's mutations have writers to hide.
const WRITERS: &[&str] = &[
    "touch new.txt",
    "echo x > out.txt",
    "sort -o out.txt notes.txt",
    "uniq notes.txt out.txt",
    "tee out.txt < notes.txt",
    "cp notes.txt copy.txt",
    "mkdir newdir",
    "rm -f notes.txt",
    "ln -s notes.txt link",
    "chmod 600 notes.txt",
    "date -s 2020-01-01",
    "hostname newname",
    "kill -TERM 1",
    "sysctl -w kernel.hostname=x",
    "split -l 2 notes.txt part.",
    "base64 -o out.txt notes.txt",
];

const SED_PROGRAMS: &[&str] = &[
    "p",
    "1,3p",
    "/alpha/p",
    "$=",
    "l",
    "1{p;q}",
    "p;w out.txt",
    "w /dev/stdout",
    "s/a/b/w out.txt",
    "s/a/b/gw out.txt",
    "W out.txt",
    "e id",
    "s/alpha/id/e",
    "r lines.txt",
    "R lines.txt",
    "F",
    "s/x/$(id)/p",
    "1e touch x",
    "s/a/b/;w out.txt",
    "/x/!p",
];

const AWK_PROGRAMS: &[&str] = &[
    "{print $1}",
    "NR==2",
    "BEGIN{print 1+2}",
    "BEGIN{system(\"id\")}",
    "{print > \"out.txt\"}",
    "{print >> \"out.txt\"}",
    "{print | \"sh\"}",
    "{print | \"cat\"}",
    "BEGIN{\"id\" | getline x; print x}",
    "BEGIN{while ((getline l < \"notes.txt\") > 0) print l}",
    "BEGIN{printf \"x\" > \"/dev/stderr\"}",
    "BEGIN{fflush(); close(\"x\")}",
    "END{print NR}",
    "BEGIN{cmd=\"date\"; cmd | getline d; print d}",
    "-F: {print $1}",
];

const FIND_ACTIONS: &[&str] = &[
    "-fprint out.txt",
    "-fprint0 out.txt",
    "-fprintf out.txt %p",
    "-fls out.txt",
    "-exec id ;",
    "-exec ls {} +",
    "-execdir ls {} ;",
    "-ok id ;",
    "-okdir id ;",
    "-delete",
    "-printf %p\\n",
    "-ls",
    "-quit",
    "-prune",
    "-print",
    "-newer notes.txt",
    "-size +1k",
    "-mtime -1",
];

const GIT_COMMANDS: &[&str] = &[
    "status",
    "status --short",
    "log --oneline",
    "log -p -1",
    "log --stat",
    "log --output=out.txt",
    "diff",
    "diff --stat",
    "diff --output=out.txt",
    "diff --ext-diff",
    "show HEAD",
    "show --stat v1",
    "branch -a",
    "tag -l",
    "stash list",
    "rev-parse HEAD",
    "ls-files",
    "cat-file -p HEAD",
    "config --list",
    "config user.name x",
    "blame README",
    "grep first",
    "grep -O first",
    "describe --tags",
    "shortlog -s",
    "reflog",
    "remote -v",
    "fsck",
    "count-objects -v",
    "log --format=%H -1",
    "worktree list",
    "archive -o out.tar HEAD",
];

const GIT_GLOBALS: &[&str] = &[
    "-C repo",
    "-C repo --no-pager",
    "-C repo -c core.pager=id",
    "-C repo -c alias.x=!id",
    "-C repo -c diff.external=id",
    "-C repo -c core.fsmonitor=id",
    "-C repo -c core.hooksPath=/tmp",
    "--git-dir=repo/.git",
    "-C repo --exec-path=/tmp",
];

const REMOTE: &[&str] = &[
    "tar -tf h:archive.tar",
    "tar -tvf host:/srv/x.tar",
    "tar --force-local -tf a:b",
    "tar -xOf h:archive.tar",
    "tar -t -f user@host:/x.tar",
    "rsync h:notes.txt .",
    "rsync -n h:x /tmp/",
    "rsync --list-only h:/etc/",
    "rsync --list-only notes.txt",
    "scp h:notes.txt /dev/null",
    "scp -q notes.txt h:/tmp/",
    "cpio -it -F h:archive.cpio",
    "mt -f h:/dev/tape status",
    "ssh h cat notes.txt",
    "sftp h:notes.txt",
];

const PIPE_TAILS: &[&str] = &[
    "head -3",
    "wc -l",
    "sort",
    "grep a",
    "cat",
    "tail -n 2",
    "uniq -c",
    "tr a b",
    "sed -n p",
    "awk '{print $1}'",
    "xargs echo",
    "tee out.txt",
    "sh",
    "bash",
    "xargs rm",
    "cut -c1-5",
];

const REDIRECTS: &[&str] = &[
    "> out.txt",
    ">> out.txt",
    "<> notes.txt",
    ">| out.txt",
    "&> out.txt",
    "2> err.txt",
    "2>/dev/null",
    ">/dev/null 2>&1",
    "< notes.txt",
    "3> fd.txt",
    ">&2",
    "1>&-",
    "2>&1",
    "> /dev/stdout",
    "> /dev/stderr",
    "> /dev/fd/1",
    ">/dev/tty",
    "&>/dev/null",
    "2>>/dev/null",
    "> /proc/sys/kernel/hostname",
];

/// Every reader once with each option its table allows, and once with options it does not
/// list (one unknown short letter and one long option that writes or runs elsewhere).
pub fn table_commands() -> Vec<String> {
    let mut commands = Vec::new();
    for table in option_tables::option_tables() {
        let program = table.program;
        let file = operand_for(program);
        for flag in table.flags.chars() {
            commands.push(format!("{program} -{flag} {file}"));
        }
        for value in table.values.chars() {
            commands.push(format!("{program} -{value} 3 {file}"));
            commands.push(format!("{program} -{value}notes.txt {file}"));
        }
        for long in table.long_flags {
            commands.push(format!("{program} --{long} {file}"));
        }
        for long in table.long_values {
            commands.push(format!("{program} --{long}=3 {file}"));
            commands.push(format!("{program} --{long} out.txt {file}"));
        }
        if let Some(letter) = unlisted_letter(&table) {
            commands.push(format!("{program} -{letter} {file}"));
        }
        commands.push(format!("{program} --output=o.txt {file}"));
    }
    let (tests, value_tests) = option_tables::find_primaries();
    for test in tests {
        commands.push(format!("find . {test}"));
    }
    for test in value_tests {
        commands.push(format!("find . {test} '*.txt'"));
    }
    for option in option_tables::ip_options() {
        commands.push(format!("ip {option} addr show"));
    }
    for reader in option_tables::readers() {
        commands.push(format!("{reader} {}", operand_for(reader)));
    }
    for program in option_tables::operands_only() {
        commands.push(format!("{program} notes.txt"));
    }
    commands
}

/// A seeded, endless source of commands.
pub struct Generator {
    rng: Rng,
    tables: Vec<OptionTable>,
    readers: &'static [&'static str],
}

impl Generator {
    /// A generator whose commands depend only on `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator {
            rng: Rng::new(seed),
            tables: option_tables::option_tables().collect(),
            readers: option_tables::readers(),
        }
    }

    /// The next command.
    pub fn next_command(&mut self) -> String {
        let command = self.compose(2);
        if self.rng.chance(20) {
            self.mutate(command)
        } else {
            command
        }
    }

    fn compose(&mut self, depth: u32) -> String {
        if depth == 0 || self.rng.chance(35) {
            return self.base();
        }
        let inner = self.compose(depth - 1);
        let rng = &mut self.rng;
        match rng.below(34) {
            0 => format!("echo $({inner})"),
            1 => format!("echo `{inner}`"),
            2 => format!("x=$({inner}); echo \"$x\""),
            3 => format!("{inner}; {}", self.base()),
            4 => format!("{inner} && {}", self.base()),
            5 => format!("{inner} || {}", self.base()),
            6 => format!("{inner} | {}", rng.pick(PIPE_TAILS)),
            7 => format!("{inner} {}", rng.pick(REDIRECTS)),
            8 => format!("{inner} <<EOF\nalpha $(id)\n`id`\nEOF"),
            9 => format!("cat <<'EOF'\n$({inner})\nEOF"),
            10 => format!("{inner} <<< \"text\""),
            11 => format!("cat <<< $({inner})"),
            12 => format!("[[ -f notes.txt ]] && {inner}"),
            13 => format!("[[ $x -eq 1 ]] || {inner}"),
            14 => format!("(( x = 1 )); {inner}"),
            15 => format!("a=(1 2); echo $(( a[$({inner})] ))"),
            16 => format!("let 'a[$({inner})]=1'"),
            17 => format!("printf -v 'a[$({inner})]' %s x"),
            18 => format!("read -r 'a[$({inner})]' <<< 1"),
            19 => format!("for f in *.txt; do {inner}; done"),
            20 => format!("for x in a b; do {inner}; done"),
            21 => format!("f() {{ {inner}; }}; f"),
            22 => format!("if {inner}; then echo yes; fi"),
            23 => format!("case x in x) {inner};; esac"),
            24 => format!("( {inner} )"),
            25 => format!("{{ {inner}; }}"),
            26 => format!("{} {inner}", rng.pick(WRAPPERS)),
            27 => format!("sh -c {}", quote(&inner)),
            28 => format!("bash -c {}", quote(&inner)),
            29 => format!("echo notes.txt | xargs {inner}"),
            30 => format!("diff <({inner}) <(cat notes.txt)"),
            31 => format!("{} {inner}", rng.pick(ASSIGNMENTS)),
            32 => format!("while false; do :; done; {inner}"),
            _ => format!("! {inner}"),
        }
    }

    fn base(&mut self) -> String {
        match self.rng.below(100) {
            0..=29 => self.table_reader(),
            30..=37 => {
                let reader = *self.rng.pick(self.readers);
                format!("{reader} {}", operand_for(reader))
            }
            38..=45 => self.sed(),
            46..=53 => self.awk(),
            54..=61 => self.find(),
            62..=69 => self.git(),
            70..=74 => (*self.rng.pick(REMOTE)).to_owned(),
            75..=86 => (*self.rng.pick(SYSTEM_READERS)).to_owned(),
            87..=91 => self.shell_form(),
            _ => (*self.rng.pick(WRITERS)).to_owned(),
        }
    }

    fn table_reader(&mut self) -> String {
        let table = *self.rng.pick(&self.tables);
        let mut words = vec![table.program.to_owned()];
        for _ in 0..=self.rng.below(3) {
            if let Some(option) = self.option_of(&table) {
                words.push(option);
            }
        }
        words.push(operand_for(table.program).to_owned());
        words.join(" ")
    }

    fn option_of(&mut self, table: &OptionTable) -> Option<String> {
        let rng = &mut self.rng;
        let flags: Vec<char> = table.flags.chars().collect();
        let values: Vec<char> = table.values.chars().collect();
        Some(match rng.below(10) {
            0..=2 if !flags.is_empty() => {
                let count = 1 + rng.below(3);
                let bundle: String = (0..count).map(|_| *rng.pick(&flags)).collect();
                format!("-{bundle}")
            }
            3 | 4 if !values.is_empty() => {
                let value = rng.pick(VALUES);
                if rng.chance(50) {
                    format!("-{} {value}", rng.pick(&values))
                } else {
                    format!("-{}{value}", rng.pick(&values))
                }
            }
            5 if !table.long_flags.is_empty() => format!("--{}", rng.pick(table.long_flags)),
            6 if !table.long_values.is_empty() => {
                let long = rng.pick(table.long_values);
                let value = rng.pick(VALUES);
                if rng.chance(50) {
                    format!("--{long}={value}")
                } else {
                    format!("--{long} {value}")
                }
            }
            7 => format!("-{}", unlisted_letter(table)?),
            8 => (*rng.pick(UNLISTED_LONG)).to_owned(),
            _ => return None,
        })
    }

    fn sed(&mut self) -> String {
        let program = *self.rng.pick(SED_PROGRAMS);
        let file = self.file();
        match self.rng.below(6) {
            0 => format!("sed -n {} {file}", quote(program)),
            1 => format!("sed {} {file}", quote(program)),
            2 => format!("sed -n -e p -e {} {file}", quote(program)),
            3 => format!("sed --sandbox -n {} {file}", quote(program)),
            4 => format!("sed -n -f script.sed {file}"),
            _ => format!("sed -s -n {} {file} lines.txt", quote(program)),
        }
    }

    fn awk(&mut self) -> String {
        let program = *self.rng.pick(AWK_PROGRAMS);
        let awk = *self.rng.pick(&["awk", "mawk", "gawk", "busybox awk"]);
        let file = self.file();
        match program.strip_prefix("-F: ") {
            Some(rest) => format!("{awk} -F: {} /etc/passwd", quote(rest)),
            None if self.rng.chance(15) => format!("{awk} -f prog.awk {file}"),
            None => format!("{awk} {} {file}", quote(program)),
        }
    }

    fn find(&mut self) -> String {
        let (tests, value_tests) = option_tables::find_primaries();
        let mut words = vec![
            "find".to_owned(),
            (*self.rng.pick(&[".", "dir", "-L ."])).to_owned(),
        ];
        if self.rng.chance(50) && !value_tests.is_empty() {
            words.push(format!("{} '*.txt'", self.rng.pick(value_tests)));
        }
        if self.rng.chance(30) && !tests.is_empty() {
            let test = *self.rng.pick(tests);
            if !matches!(test, "(" | ")" | ",") {
                words.push(test.to_owned());
            }
        }
        if self.rng.chance(60) {
            let action = *self.rng.pick(FIND_ACTIONS);
            words.push(action.replace(';', "\\;"));
        }
        words.join(" ")
    }

    fn git(&mut self) -> String {
        let global = *self.rng.pick(GIT_GLOBALS);
        let command = *self.rng.pick(GIT_COMMANDS);
        format!("git {global} {command}")
    }

    fn shell_form(&mut self) -> String {
        let forms: &[&str] = &[
            "echo $'a\\nb'",
            "$'\\164ouch' new.txt",
            "$'\\x6c\\x73'",
            "{touch,new.txt}",
            "{echo,hi}",
            "echo {a,b}.txt",
            "cat {notes,lines}.txt",
            "x=notes.txt; cat $x",
            "cat ${x:-notes.txt}",
            "echo ${x:=y}",
            "echo ${#PATH}",
            "cat *.txt",
            "ls d*",
            "exec 3<notes.txt; cat <&3",
            "function f { cat notes.txt; }; f",
            "declare -i n='a[$(touch new.txt)]'",
            "[[ 1 -eq 'a[$(touch new.txt)]' ]]",
            "(( a[$(touch new.txt)] ))",
            "echo $(( 1 + 2 ))",
            "let x=1+2",
            "printf -v x %s y; echo $x",
            "read -r x <<< 'y'; echo $x",
            "select x in a; do break; done < /dev/null",
            "getopts ab x -a",
            "echo ~",
            "echo \"$(cat notes.txt)\"",
            "echo 'single $(id)'",
            "echo \"double `id`\"",
            "cat <(ls)",
            "ls >(cat)",
            "coproc cat notes.txt",
            "time ls",
            "arr=(a b); echo ${arr[0]}",
            "echo $RANDOM",
            "trap 'touch t' EXIT",
            "alias ls='touch x'; ls",
            "set -e; ls",
            "shopt -s nullglob; ls",
            "PS4='$(touch x)' ; set -x; ls",
        ];
        (*self.rng.pick(forms)).to_owned()
    }

    fn mutate(&mut self, command: String) -> String {
        let rng = &mut self.rng;
        match rng.below(6) {
            0 => match command.split_once(' ') {
                Some((head, tail)) => format!("{head} {} {tail}", rng.pick(UNLISTED_LONG)),
                None => format!("{command} {}", rng.pick(UNLISTED_LONG)),
            },
            1 => command.replacen("notes.txt", "\"notes.txt\"", 1),
            2 => command.replacen("notes.txt", "'n'otes.txt", 1),
            3 => format!("{command} {}", rng.pick(REDIRECTS)),
            4 => match command.split_once(' ') {
                Some((head, tail)) => format!("\\{head} {tail}"),
                None => format!("\"{command}\""),
            },
            _ => format!("{command}; {}", rng.pick(WRITERS)),
        }
    }

    fn file(&mut self) -> &'static str {
        let file: &&str = self.rng.pick(FILES);
        file
    }
}

const WRAPPERS: &[&str] = &[
    "env",
    "env -i",
    "env X=1",
    "env -u HOME",
    "timeout 5",
    "timeout -s KILL 5",
    "nice",
    "nice -n 5",
    "nohup",
    "command",
    "stdbuf -oL",
    "ionice -c3",
    "sudo",
    "sudo -u root",
    "exec",
    "builtin",
    "busybox",
    "time",
    "xargs -a notes.txt",
    "flock /tmp/lock",
    "chroot /",
    "unshare -n",
    "setsid",
];

const ASSIGNMENTS: &[&str] = &[
    "X=1",
    "LC_ALL=C",
    "PAGER=cat",
    "GIT_PAGER=id",
    "PATH=/tmp:$PATH",
    "LD_PRELOAD=/tmp/x.so",
    "BASH_ENV=/tmp/x",
    "ENV=/tmp/x",
    "IFS=/",
    "TZ=UTC",
];

/// A file operand that suits `program`.
fn operand_for(program: &str) -> &'static str {
    match program {
        "tar" => "-f archive.tar",
        "zcat" | "zgrep" | "zless" | "zmore" | "gunzip" | "gzip" => "notes.txt.gz",
        "jq" | "yq" => ". config.json",
        "grep" | "egrep" | "fgrep" | "rg" => "alpha notes.txt",
        "ls" | "du" | "tree" | "find" | "stat" => "dir",
        "git" => "status",
        "date" | "uptime" | "free" | "df" | "ps" | "id" | "whoami" | "hostname" | "uname" => "",
        _ => "notes.txt",
    }
}

/// A short option letter the table lists neither as a flag nor as taking a value.
fn unlisted_letter(table: &OptionTable) -> Option<char> {
    ('a'..='z')
        .chain('A'..='Z')
        .find(|c| !table.flags.contains(*c) && !table.values.contains(*c))
}

/// `text` single-quoted for a POSIX shell.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_commands_and_another_seed_others() {
        let first: Vec<String> = {
            let mut generator = Generator::new(42);
            (0..50).map(|_| generator.next_command()).collect()
        };
        let again: Vec<String> = {
            let mut generator = Generator::new(42);
            (0..50).map(|_| generator.next_command()).collect()
        };
        let other: Vec<String> = {
            let mut generator = Generator::new(43);
            (0..50).map(|_| generator.next_command()).collect()
        };
        assert_eq!(first, again);
        assert_ne!(first, other);
    }

    #[test]
    fn the_table_commands_name_every_reader_with_listed_and_unlisted_options() {
        let commands = table_commands();
        assert!(
            commands.contains(&"cat -A notes.txt".to_owned()),
            "{:?}",
            &commands[..5]
        );
        assert!(commands.contains(&"head --lines=3 notes.txt".to_owned()));
        assert!(commands.contains(&"cat --output=o.txt notes.txt".to_owned()));
        assert!(
            commands
                .iter()
                .any(|command| command.starts_with("find . -name"))
        );
    }

    #[test]
    fn quoting_survives_a_single_quote() {
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
