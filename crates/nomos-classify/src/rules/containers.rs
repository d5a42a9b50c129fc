//! Containers: `docker` (and `podman`), `docker compose` / `docker-compose`, `kubectl`, LXC.
//!
//! `docker exec|run`, `docker compose exec|run` and `kubectl exec` are never read-only; the
//! command they run inside the container is classified too, so `docker exec c rm -rf /data`
//! is destructive.

use super::super::opts::{Opt, Opts, Spec};
use super::super::walk::{Arg, Cx, Subject};
use super::Verbs;
use crate::class::CommandClass;

const DOCKER: Verbs = Verbs {
    read_only: &[
        "ps",
        "images",
        "inspect",
        "logs",
        "version",
        "info",
        "stats",
        "top",
        "port",
        "events",
        "history",
        "search",
        "diff",
        "wait",
        "help",
        "--version",
        "--help",
        "-v",
    ],
    destructive: &["stop", "kill", "rm", "rmi"],
    destroys: "stops or deletes containers or images",
};

pub(crate) const DOCKER_SPEC: Spec = Spec {
    short_values: "Hcl",
    long_values: &[
        "host",
        "context",
        "config",
        "log-level",
        "tlscacert",
        "tlscert",
        "tlskey",
    ],
};

const COMPOSE: Verbs = Verbs {
    read_only: &[
        "logs",
        "ps",
        "top",
        "config",
        "images",
        "port",
        "ls",
        "version",
        "events",
        "convert",
        "help",
        "--version",
        "--help",
    ],
    destructive: &["down", "stop", "rm", "kill"],
    destroys: "stops or removes the project's containers",
};

const COMPOSE_SPEC: Spec = Spec {
    short_values: "fp",
    long_values: &[
        "file",
        "project-name",
        "project-directory",
        "env-file",
        "profile",
        "ansi",
        "parallel",
        "progress",
    ],
};

/// Subcommands of docker's management commands (`docker volume ls`, `docker system prune`).
const MANAGED: Verbs = Verbs {
    read_only: &[
        "ls", "list", "ps", "inspect", "logs", "stats", "top", "port", "diff", "wait", "history",
        "df", "info", "events", "show", "du", "services", "version",
    ],
    destructive: &["rm", "remove", "prune", "stop", "kill", "leave"],
    destroys: "deletes or stops what it manages",
};

const RUN_SPEC: Spec = Spec {
    short_values: "aceEhlmpuvw",
    long_values: &[
        "attach",
        "add-host",
        "annotation",
        "blkio-weight",
        "cap-add",
        "cap-drop",
        "cgroup-parent",
        "cgroupns",
        "cidfile",
        "cpu-period",
        "cpu-quota",
        "cpu-rt-period",
        "cpu-rt-runtime",
        "cpu-shares",
        "cpus",
        "cpuset-cpus",
        "cpuset-mems",
        "device",
        "device-cgroup-rule",
        "device-read-bps",
        "device-read-iops",
        "device-write-bps",
        "device-write-iops",
        "dns",
        "dns-option",
        "dns-search",
        "domainname",
        "entrypoint",
        "env",
        "env-file",
        "expose",
        "gpus",
        "group-add",
        "health-cmd",
        "health-interval",
        "health-retries",
        "health-start-period",
        "health-timeout",
        "hostname",
        "ip",
        "ip6",
        "ipc",
        "isolation",
        "kernel-memory",
        "label",
        "label-file",
        "link",
        "link-local-ip",
        "log-driver",
        "log-opt",
        "mac-address",
        "memory",
        "memory-reservation",
        "memory-swap",
        "memory-swappiness",
        "mount",
        "name",
        "network",
        "net",
        "network-alias",
        "oom-score-adj",
        "pid",
        "pids-limit",
        "platform",
        "publish",
        "pull",
        "restart",
        "runtime",
        "security-opt",
        "shm-size",
        "stop-signal",
        "stop-timeout",
        "storage-opt",
        "sysctl",
        "tmpfs",
        "ulimit",
        "user",
        "userns",
        "uts",
        "volume",
        "volume-driver",
        "volumes-from",
        "workdir",
        "env-from-file",
        "service-ports",
        "index",
    ],
};

const EXEC_SPEC: Spec = Spec {
    short_values: "euw",
    long_values: &["env", "env-file", "user", "workdir", "detach-keys", "index"],
};

/// Handles container programs; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    match args[0].text {
        "docker" | "podman" | "nerdctl" => docker(cx, args),
        "docker-compose" | "podman-compose" => compose(cx, args, 0),
        "kubectl" | "oc" => kubectl(cx, args),
        "lxc-attach" => match args.iter().position(|arg| arg.text == "--") {
            Some(at) if at + 1 < args.len() => {
                cx.mutation(args[0].text, "runs a command in a container");
                cx.run(&args[at + 1..]);
            }
            _ => cx.mutation(args[0].text, "opens a shell in a container"),
        },
        "lxc-stop" | "lxc-destroy" => cx.destructive(args[0].text, "stops or destroys a container"),
        "lxc-start" | "lxc-create" | "lxc-copy" | "lxc-freeze" | "lxc-unfreeze"
        | "lxc-snapshot" => {
            cx.mutation(args[0].text, "changes a container");
        }
        "crictl" => {
            let verbs = Verbs {
                read_only: &[
                    "ps",
                    "pods",
                    "images",
                    "img",
                    "inspect",
                    "inspecti",
                    "inspectp",
                    "logs",
                    "stats",
                    "statsp",
                    "info",
                    "version",
                    "imagefsinfo",
                ],
                destructive: &["rm", "rmi", "rmp", "stop", "stopp"],
                destroys: "stops or deletes containers",
            };
            super::by_verb(
                cx,
                args,
                &Spec::FLAGS_ONLY,
                &verbs,
                (CommandClass::ReadOnly, "prints its usage"),
            );
        }
        _ => return false,
    }
    true
}

fn docker(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let (_, at) = Opts::leading(&args[1..], &DOCKER_SPEC);
    let verb_at = at + 1;
    let Some(verb) = args.get(verb_at).map(|arg| arg.text) else {
        cx.read_only(program, "prints its usage");
        return;
    };
    match verb {
        "compose" => compose(cx, args, verb_at),
        "run" | "create" => run_in_image(cx, args, verb_at),
        "exec" => exec_in_container(cx, args, verb_at, &EXEC_SPEC),
        "container" | "image" | "volume" | "network" | "system" | "context" | "node"
        | "service" | "stack" | "secret" | "config" | "plugin" | "buildx" | "builder"
        | "manifest" | "swarm" | "trust" | "checkpoint" => {
            let Some(sub) = args.get(verb_at + 1).map(|arg| arg.text) else {
                cx.read_only(program, "prints its usage");
                return;
            };
            match (verb, sub) {
                ("container", "run" | "create") => run_in_image(cx, args, verb_at + 1),
                ("container", "exec") => exec_in_container(cx, args, verb_at + 1, &EXEC_SPEC),
                ("context", "rm" | "remove") => {
                    cx.report(
                        CommandClass::ConfigMutation,
                        Subject::Command(program, verb),
                        "removes a context",
                    );
                }
                _ => {
                    let class = MANAGED.class_of(sub);
                    let predicate = match class {
                        CommandClass::ReadOnly => "only reads",
                        CommandClass::ConfigMutation => "changes state",
                        CommandClass::Destructive => MANAGED.destroys,
                    };
                    cx.report(class, Subject::Command(program, verb), predicate);
                }
            }
        }
        _ => DOCKER.report(cx, program, verb),
    }
}

/// `docker run [opts] IMAGE [CMD...]`: never read-only; the command is classified too.
fn run_in_image(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>], verb_at: usize) {
    let verb = args[verb_at].text;
    cx.report(
        CommandClass::ConfigMutation,
        Subject::Command(args[0].text, verb),
        "starts a container",
    );
    let (_, at) = Opts::leading(&args[verb_at + 1..], &RUN_SPEC);
    let image_at = verb_at + 1 + at;
    if let Some(command) = args.get(image_at + 1..).filter(|rest| !rest.is_empty()) {
        cx.run(command);
    }
}

/// `docker exec [opts] CONTAINER CMD...`: never read-only; the command is classified too.
fn exec_in_container(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>], verb_at: usize, spec: &Spec) {
    let verb = args[verb_at].text;
    cx.report(
        CommandClass::ConfigMutation,
        Subject::Command(args[0].text, verb),
        "runs a command in a container",
    );
    let (_, at) = Opts::leading(&args[verb_at + 1..], spec);
    let target_at = verb_at + 1 + at;
    if let Some(command) = args.get(target_at + 1..).filter(|rest| !rest.is_empty()) {
        cx.run(command);
    }
}

/// `docker compose ...` (`compose_at` is the index of `compose`, or 0 for `docker-compose`).
fn compose(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>], compose_at: usize) {
    let (_, at) = Opts::leading(&args[compose_at + 1..], &COMPOSE_SPEC);
    let verb_at = compose_at + 1 + at;
    let name = if compose_at == 0 {
        args[0].text
    } else {
        "docker compose"
    };
    let Some(verb) = args.get(verb_at).map(|arg| arg.text) else {
        cx.read_only(name, "prints its usage");
        return;
    };
    let writes_output = args[verb_at + 1..].iter().any(|arg| {
        arg.text.starts_with("-o") || arg.text == "--output" || arg.text.starts_with("--output=")
    });
    match verb {
        "exec" => exec_in_container(cx, args, verb_at, &EXEC_SPEC),
        "run" => run_in_image(cx, args, verb_at),
        // `config -o FILE` writes the resolved project to a file.
        "config" if writes_output => {
            cx.report(
                CommandClass::ConfigMutation,
                Subject::Command(name, verb),
                "writes its output to a file (-o)",
            );
        }
        _ => {
            if compose_at == 0 {
                COMPOSE.report(cx, name, verb);
            } else {
                let class = COMPOSE.class_of(verb);
                let predicate = match class {
                    CommandClass::ReadOnly => "only reads",
                    CommandClass::ConfigMutation => "changes the project's containers",
                    CommandClass::Destructive => COMPOSE.destroys,
                };
                cx.report(class, Subject::Command("docker compose", verb), predicate);
            }
        }
    }
}

fn kubectl(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let end = args
        .iter()
        .position(|arg| arg.text == "--")
        .unwrap_or(args.len());
    let spec = Spec {
        short_values: "nslocfp",
        long_values: &[
            "namespace",
            "context",
            "cluster",
            "kubeconfig",
            "user",
            "server",
            "token",
            "as",
            "as-group",
            "selector",
            "output",
            "container",
            "filename",
            "field-selector",
            "sort-by",
            "template",
            "since",
            "tail",
            "type",
            "replicas",
            "image",
        ],
    };
    let opts = Opts::parse(&args[1..end], &spec);
    let mut positionals = opts.items.iter().filter_map(|item| match item {
        Opt::Positional(arg) => Some(arg.text),
        _ => None,
    });
    let Some(verb) = positionals.next() else {
        cx.read_only(program, "prints its usage");
        return;
    };
    let sub = positionals.next();
    let class = match (verb, sub) {
        (
            "get" | "describe" | "logs" | "top" | "explain" | "version" | "api-resources"
            | "api-versions" | "cluster-info" | "diff" | "events" | "wait" | "help",
            _,
        ) => CommandClass::ReadOnly,
        (
            "config",
            Some("view" | "get-contexts" | "current-context" | "get-clusters" | "get-users"),
        ) => CommandClass::ReadOnly,
        ("rollout", Some("status" | "history")) => CommandClass::ReadOnly,
        ("auth", Some("can-i" | "whoami")) => CommandClass::ReadOnly,
        ("delete" | "drain", _) => CommandClass::Destructive,
        ("exec" | "attach" | "debug" | "run" | "cp" | "port-forward" | "proxy", _) => {
            cx.report(
                CommandClass::ConfigMutation,
                Subject::Command(program, verb),
                "runs or reaches into a pod",
            );
            if end + 1 < args.len() {
                cx.run(&args[end + 1..]);
            }
            return;
        }
        _ => CommandClass::ConfigMutation,
    };
    let predicate = match class {
        CommandClass::ReadOnly => "only reads",
        CommandClass::ConfigMutation => "changes the cluster",
        CommandClass::Destructive => "deletes or evicts resources",
    };
    cx.report(class, Subject::Command(program, verb), predicate);
}
