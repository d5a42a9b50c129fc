//! SQL clients (`psql`, `mysql`, `sqlite3`), their dump and admin tools, and `redis-cli`.
//!
//! The SQL a client is given (`-c`, `-e`, arguments, or a here-document on its input) is
//! read as a token stream: `DROP`, `TRUNCATE` and `DELETE` anywhere are destructive; writes
//! (`INSERT`, `UPDATE`, `CREATE`, `ALTER`, `GRANT`, `SELECT ... INTO`) change state; only
//! reading statements (`SELECT`, `SHOW`, `EXPLAIN`, meta commands such as `\dt`) read.

use super::super::opts::{Opt, Opts, Spec};
use super::super::walk::{Arg, Cx, Stdin};
use super::paths;
use crate::class::CommandClass;

/// Handles SQL clients and tools; `false` for other programs.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    match program {
        "psql" => psql(cx, args),
        "mysql" | "mariadb" => mysql(cx, args),
        "sqlite3" | "sqlite" => sqlite(cx, args),
        "pg_dump" | "pg_dumpall" | "mysqldump" | "mariadb-dump" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "fdhpUnNtTZ",
                    long_values: &["file", "dbname", "host", "port", "username", "result-file"],
                },
            );
            if opts.either('f', "file") || opts.long("result-file") {
                cx.mutation(program, "writes a dump file");
            } else {
                cx.read_only(program, "only dumps to its output");
            }
        }
        "pg_restore" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "dfhpUnNtTIjLPS",
                    long_values: &["dbname", "file", "host"],
                },
            );
            if opts.either('c', "clean") {
                cx.destructive(program, "drops objects before restoring (--clean)");
            } else if opts.either('d', "dbname") {
                cx.mutation(program, "restores into a database");
            } else {
                cx.read_only(program, "only prints the restore script");
            }
        }
        "dropdb" | "dropuser" => cx.destructive(program, "drops a database or role"),
        "createdb" | "createuser" => cx.mutation(program, "creates a database or role"),
        "pg_isready" | "pg_lsclusters" | "pg_controldata" | "pg_config" => {
            cx.read_only(program, "only reads")
        }
        "pg_ctl" | "pg_ctlcluster" => {
            let verb = args[1..].iter().map(|arg| arg.text).find(|text| {
                matches!(
                    *text,
                    "status"
                        | "stop"
                        | "start"
                        | "restart"
                        | "reload"
                        | "promote"
                        | "kill"
                        | "init"
                        | "initdb"
                )
            });
            match verb {
                Some("status") => cx.read_only(program, "only reads"),
                Some("stop" | "kill") => cx.destructive(program, "stops the database server"),
                _ => cx.mutation(program, "changes the database server"),
            }
        }
        "redis-cli" => redis(cx, args),
        _ => return false,
    }
    true
}

fn psql(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "cdfhLopPTUvFR",
        long_values: &[
            "command",
            "dbname",
            "file",
            "host",
            "log-file",
            "output",
            "port",
            "pset",
            "table-attr",
            "username",
            "variable",
            "set",
            "field-separator",
            "record-separator",
        ],
    };
    let opts = Opts::parse(&args[1..], &spec);
    if opts.either('V', "version") || opts.long("help") {
        cx.read_only(program, "only prints its version");
        return;
    }
    let output = opts
        .short_value('o')
        .or(opts.long_value("output"))
        .or(opts.short_value('L'))
        .or(opts.long_value("log-file"));
    if let Some(file) = output
        && !paths::is_harmless_sink(file)
    {
        cx.mutation(program, "writes its output to a file");
    }
    let mut ran = false;
    for item in &opts.items {
        match item {
            Opt::Short('c', Some(sql)) | Opt::Long("command", Some(sql)) => {
                sql_findings(cx, program, sql);
                ran = true;
            }
            Opt::Short('f', Some(file)) | Opt::Long("file", Some(file)) if *file != "-" => {
                cx.mutation(program, "runs SQL from a file the classifier cannot read");
                ran = true;
            }
            _ => {}
        }
    }
    if ran {
        return;
    }
    if opts.either('l', "list") {
        cx.read_only(program, "only lists databases");
        return;
    }
    from_input(cx, program);
}

fn mysql(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "eDhPuS",
        long_values: &["execute", "database", "host", "port", "user", "socket"],
    };
    let opts = Opts::parse(&args[1..], &spec);
    if opts.either('V', "version") || opts.long("help") {
        cx.read_only(program, "only prints its version");
        return;
    }
    let mut ran = false;
    for item in &opts.items {
        if let Opt::Short('e', Some(sql)) | Opt::Long("execute", Some(sql)) = item {
            sql_findings(cx, program, sql);
            ran = true;
        }
    }
    if !ran {
        from_input(cx, program);
    }
}

fn sqlite(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    const VALUED: [&str; 12] = [
        "-cmd",
        "-init",
        "-separator",
        "-newline",
        "-nullvalue",
        "-mmap",
        "-pagecache",
        "-lookaside",
        "-vfs",
        "-maxsize",
        "-escape",
        "-heap",
    ];
    let mut idx = 1;
    let mut positionals = Vec::new();
    let mut ran = false;
    while let Some(arg) = args.get(idx) {
        if arg.text == "-version" || arg.text == "--version" || arg.text == "-help" {
            cx.read_only(program, "only prints its version");
            return;
        }
        if arg.text == "-cmd"
            && let Some(command) = args.get(idx + 1)
        {
            sql_findings(cx, program, command.text);
        }
        if arg.text == "-init" {
            cx.mutation(program, "runs SQL from a file the classifier cannot read");
        }
        if VALUED.contains(&arg.text) {
            idx += 2;
            continue;
        }
        if !arg.text.starts_with('-') {
            positionals.push(*arg);
        }
        idx += 1;
    }
    // The database is opened for writing, and created when missing, unless `-readonly`
    // (a traced run opens it `O_RDWR|O_CREAT`).
    if !args
        .iter()
        .any(|arg| arg.text == "-readonly" || arg.text == "--readonly")
    {
        cx.mutation(
            program,
            "opens the database for writing, creating it when missing (no -readonly)",
        );
    }
    for sql in positionals.iter().skip(1) {
        if let Some(dot) = sqlite_dot_command(sql.text) {
            let predicate = format!("runs the dot-command `{dot}`, which writes or runs programs");
            cx.mutation(program, &predicate);
        }
        sql_findings(cx, program, sql.text);
        ran = true;
    }
    if !ran {
        from_input(cx, program);
    }
}

/// The first sqlite3 dot-command of `text` that is not known to only print (`.shell`,
/// `.system`, `.output`, `.once`, `.import`, `.save`, `.backup`, `.open`, `.load`, ...).
fn sqlite_dot_command(text: &str) -> Option<&str> {
    const PRINTS: &[&str] = &[
        ".tables",
        ".table",
        ".schema",
        ".fullschema",
        ".indexes",
        ".indices",
        ".databases",
        ".dbinfo",
        ".dump",
        ".headers",
        ".header",
        ".mode",
        ".width",
        ".show",
        ".help",
        ".stats",
        ".timer",
        ".print",
        ".echo",
        ".nullvalue",
        ".separator",
        ".version",
        ".changes",
        ".eqp",
        ".explain",
    ];
    text.lines()
        .map(str::trim_start)
        .filter(|line| line.starts_with('.'))
        .map(|line| line.split_whitespace().next().unwrap_or(line))
        .find(|dot| !PRINTS.contains(dot))
}

/// A client with no SQL in its arguments reads SQL from its input.
fn from_input(cx: &mut Cx<'_, '_, '_, '_>, program: &str) {
    match cx.stdin() {
        Stdin::Text(text) => sql_findings(cx, program, &text),
        Stdin::Pipe(producer) => {
            // Like a shell fed by a pipe: SQL nobody can read may drop or truncate.
            let predicate = format!(
                "runs SQL piped from `{producer}`, which the classifier cannot read (it may drop data)"
            );
            cx.destructive(program, &predicate);
        }
        Stdin::File => cx.mutation(program, "runs SQL from a file the classifier cannot read"),
        Stdin::Empty => cx.mutation(program, "opens an interactive session"),
    }
}

/// Reports every finding of an SQL text (and classifies `\!` shell escapes as scripts).
fn sql_findings(cx: &mut Cx<'_, '_, '_, '_>, program: &str, sql: &str) {
    let mut findings = Vec::new();
    scan_sql(sql, &mut findings);
    if findings.is_empty() {
        cx.read_only(program, "runs no SQL");
    }
    for finding in findings {
        match finding {
            SqlFinding::Class(class, word, predicate) => {
                let predicate = format!("{predicate} (`{word}` through `{program}`)");
                cx.report(class, super::super::walk::Subject::Word(word), &predicate);
            }
            SqlFinding::Shell(text) => cx.script_without_input(text, program),
        }
    }
}

/// What one word or meta command of an SQL text does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SqlFinding<'a> {
    /// A class with the deciding word and what it does.
    Class(CommandClass, &'a str, &'static str),
    /// A shell command run from the client (`\!`, `.shell`).
    Shell(&'a str),
}

const READ_FIRST: &[&str] = &[
    "SELECT",
    "SHOW",
    "EXPLAIN",
    "WITH",
    "VALUES",
    "TABLE",
    "DESCRIBE",
    "DESC",
    "BEGIN",
    "START",
    "COMMIT",
    "END",
    "ROLLBACK",
    "SET",
    "RESET",
    "USE",
    "HELP",
    "PRAGMA",
    "LISTEN",
    "UNLISTEN",
    "FETCH",
    "DECLARE",
    "CLOSE",
    "SAVEPOINT",
    "RELEASE",
    "DISCARD",
    "ABORT",
    "STATUS",
];

const CHANGE_ANYWHERE: &[&str] = &[
    "INTO",
    "INSERT",
    "UPDATE",
    "MERGE",
    "UPSERT",
    "CREATE",
    "ALTER",
    "GRANT",
    "REVOKE",
    "COPY",
    "GLOBAL",
    "PERSIST",
    "OUTFILE",
    "DUMPFILE",
    "PG_TERMINATE_BACKEND",
    "PG_CANCEL_BACKEND",
    "PG_RELOAD_CONF",
    "SETVAL",
    "NEXTVAL",
    "SET_CONFIG",
    "LO_UNLINK",
    "LO_IMPORT",
    "LO_EXPORT",
    "PG_DROP_REPLICATION_SLOT",
    "PG_SWITCH_WAL",
    "PG_ROTATE_LOGFILE",
    "DBLINK_EXEC",
    "PG_PROMOTE",
    "PG_CREATE_RESTORE_POINT",
    "PG_FILE_WRITE",
    "LOAD_FILE",
    "SLEEP_AND_WRITE",
];

const DESTROY_ANYWHERE: &[&str] = &["DROP", "TRUNCATE", "DELETE"];

fn is_one_of(word: &str, list: &[&str]) -> bool {
    list.iter().any(|item| item.eq_ignore_ascii_case(word))
}

/// Reads SQL (with psql `\` meta commands and sqlite `.` dot commands) into findings.
pub(crate) fn scan_sql<'a>(sql: &'a str, out: &mut Vec<SqlFinding<'a>>) {
    let bytes = sql.as_bytes();
    let mut at = 0;
    let mut first: Option<&str> = None;
    let mut previous = "";
    let line_end = |from: usize| {
        bytes[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |n| from + n)
    };
    while at < bytes.len() {
        let b = bytes[at];
        match b {
            b'-' if bytes.get(at + 1) == Some(&b'-') => at = line_end(at),
            b'#' if first.is_none() => at = line_end(at),
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at = sql[at + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| at + 2 + n + 2);
            }
            b'\'' | b'"' | b'`' => {
                at += 1;
                while at < bytes.len() && bytes[at] != b {
                    at += if bytes[at] == b'\\' && b == b'\'' {
                        2
                    } else {
                        1
                    };
                }
                at += 1;
            }
            b'$' => {
                let tag_end = bytes[at + 1..]
                    .iter()
                    .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
                    .map(|n| at + 1 + n);
                match tag_end {
                    Some(end) if bytes[end] == b'$' => {
                        let tag = &sql[at..=end];
                        at = sql[end + 1..]
                            .find(tag)
                            .map_or(bytes.len(), |n| end + 1 + n + tag.len());
                    }
                    _ => at += 1,
                }
            }
            b';' => {
                first = None;
                at += 1;
            }
            b'\\' | b'.'
                if first.is_none()
                    && bytes
                        .get(at + 1)
                        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'!' || *c == b'?') =>
            {
                let end = line_end(at);
                let line = &sql[at..end];
                let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
                out.push(meta_command(name, rest.trim()));
                at = end;
            }
            b'=' if first.is_some_and(|word| word.eq_ignore_ascii_case("PRAGMA")) => {
                out.push(SqlFinding::Class(
                    CommandClass::ConfigMutation,
                    "PRAGMA",
                    "changes a database setting",
                ));
                at += 1;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = at;
                while at < bytes.len()
                    && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_' || bytes[at] == b'$')
                {
                    at += 1;
                }
                let word = &sql[start..at];
                if first.is_none() {
                    first = Some(word);
                    if is_one_of(word, READ_FIRST) {
                        out.push(SqlFinding::Class(
                            CommandClass::ReadOnly,
                            word,
                            "only reads",
                        ));
                    } else if !is_one_of(word, DESTROY_ANYWHERE)
                        && !is_one_of(word, CHANGE_ANYWHERE)
                    {
                        out.push(SqlFinding::Class(
                            CommandClass::ConfigMutation,
                            word,
                            "is an SQL statement that changes state",
                        ));
                    }
                }
                if is_one_of(word, DESTROY_ANYWHERE) && !previous.eq_ignore_ascii_case("ON") {
                    out.push(SqlFinding::Class(
                        CommandClass::Destructive,
                        word,
                        "destroys data",
                    ));
                } else if is_one_of(word, CHANGE_ANYWHERE) {
                    out.push(SqlFinding::Class(
                        CommandClass::ConfigMutation,
                        word,
                        "writes data",
                    ));
                }
                previous = word;
            }
            _ => at += 1,
        }
    }
}

/// A psql `\` meta command or an sqlite `.` dot command.
fn meta_command<'a>(name: &'a str, rest: &'a str) -> SqlFinding<'a> {
    let command = name.trim_start_matches(['\\', '.']);
    match command {
        "!" | "shell" | "system" => SqlFinding::Shell(rest),
        _ if name.starts_with("\\!") => SqlFinding::Shell(name[2..].trim_start()),
        "g" | "gx" if rest.is_empty() => {
            SqlFinding::Class(CommandClass::ReadOnly, name, "only reads")
        }
        "o" | "out" | "w" | "write" | "g" | "gx" | "gexec" | "i" | "ir" | "include"
        | "include_relative" | "copy" | "e" | "edit" | "ef" | "ev" | "output" | "once" | "save"
        | "backup" | "clone" | "import" | "restore" | "load" | "read" | "open" | "excel"
        | "lo_import" | "lo_export" | "lo_unlink" => SqlFinding::Class(
            CommandClass::ConfigMutation,
            name,
            "reads or writes files or runs stored SQL",
        ),
        _ => SqlFinding::Class(CommandClass::ReadOnly, name, "only reads"),
    }
}

fn redis(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "hpasunriRdD",
        long_values: &["user", "pass", "tls", "cacert", "cert", "key", "sni"],
    };
    let opts = Opts::parse(&args[1..], &spec);
    let Some(command) = opts.first_positional() else {
        if opts.long("scan")
            || opts.long("bigkeys")
            || opts.long("memkeys")
            || opts.long("stat")
            || opts.long("latency")
            || opts.long("version")
        {
            cx.read_only(program, "only reads");
        } else {
            from_input(cx, program);
        }
        return;
    };
    const READS: [&str; 38] = [
        "GET",
        "MGET",
        "KEYS",
        "SCAN",
        "INFO",
        "PING",
        "TTL",
        "PTTL",
        "TYPE",
        "EXISTS",
        "STRLEN",
        "HGET",
        "HGETALL",
        "HKEYS",
        "HVALS",
        "HLEN",
        "HMGET",
        "HSCAN",
        "LRANGE",
        "LLEN",
        "LINDEX",
        "SMEMBERS",
        "SCARD",
        "SISMEMBER",
        "SSCAN",
        "ZRANGE",
        "ZRANGEBYSCORE",
        "ZCARD",
        "ZSCORE",
        "ZSCAN",
        "DBSIZE",
        "LASTSAVE",
        "TIME",
        "ECHO",
        "ROLE",
        "MEMORY",
        "SLOWLOG",
        "LATENCY",
    ];
    const DESTROYS: [&str; 5] = ["FLUSHALL", "FLUSHDB", "DEL", "UNLINK", "SHUTDOWN"];
    let subject = super::super::walk::Subject::Word(command);
    if is_one_of(command, &DESTROYS) {
        cx.report(
            CommandClass::Destructive,
            subject,
            "deletes data or stops the server",
        );
    } else if is_one_of(command, &READS)
        || command.eq_ignore_ascii_case("CONFIG")
            && opts
                .positionals()
                .nth(1)
                .is_some_and(|arg| arg.text.eq_ignore_ascii_case("GET"))
    {
        cx.report(CommandClass::ReadOnly, subject, "only reads");
    } else {
        cx.report(
            CommandClass::ConfigMutation,
            subject,
            "changes data or settings",
        );
    }
}
