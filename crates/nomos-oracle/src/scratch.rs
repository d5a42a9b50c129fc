//! The scratch directory a sandboxed command runs in: copies of the few files the
//! generator's commands name (text files, a CSV, a log, a tar archive, a gzip file, a git
//! repository, a sed and an awk program), built once per oracle and mounted read-only.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::sandbox::SandboxError;

/// The plain files of the scratch directory, as the generator names them.
pub const FILES: &[&str] = &[
    "notes.txt",
    "lines.txt",
    "data.csv",
    "app.log",
    "config.json",
    "nginx.conf",
    "empty",
    "dir/a.txt",
    "dir/sub/b.txt",
];

/// Writes the scratch files into `dir`.
pub fn build(dir: &Path) -> Result<(), SandboxError> {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|source| SandboxError::Scratch {
                step: format!("create {}", parent.display()),
                source,
            })?;
        }
        fs::write(&path, text).map_err(|source| SandboxError::Scratch {
            step: format!("write {}", path.display()),
            source,
        })
    };
    write(
        "notes.txt",
        "alpha one\nbeta two\ngamma three\nerror: disk full\n",
    )?;
    let lines: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    write("lines.txt", &lines)?;
    write(
        "data.csv",
        "name,count,host\nweb,3,hubris\ndb,1,media\ncache,7,hubris\n",
    )?;
    write(
        "app.log",
        "2026-12-01T10:00:00Z INFO start\n2026-12-01T10:00:01Z ERROR failed to bind\n\
         2026-12-01T10:00:02Z WARN retry\n",
    )?;
    write(
        "config.json",
        "{\"name\": \"web\", \"ports\": [80, 443], \"debug\": false}\n",
    )?;
    write(
        "nginx.conf",
        "server {\n    listen 80;\n    server_name example.invalid;\n}\n",
    )?;
    write("empty", "")?;
    write("script.sed", "p\n")?;
    write("prog.awk", "{ print $1 }\n")?;
    write("dir/a.txt", "a\n")?;
    write("dir/sub/b.txt", "b\n")?;
    run(dir, "tar", &["-cf", "archive.tar", "notes.txt", "dir"])?;
    run(dir, "tar", &["-czf", "archive.tar.gz", "notes.txt", "dir"])?;
    run(dir, "gzip", &["-k", "notes.txt"])?;
    write("repo/README", "first\n")?;
    let repo = dir.join("repo");
    let git = |args: &[&str]| {
        let mut full = vec![
            "-c",
            "user.name=oracle",
            "-c",
            "user.email=oracle@example.invalid",
        ];
        full.extend_from_slice(args);
        run(&repo, "git", &full)
    };
    git(&["init", "-q", "-b", "main"])?;
    git(&["add", "README"])?;
    git(&["commit", "-q", "-m", "first"])?;
    write("repo/README", "first\nsecond\n")?;
    git(&["commit", "-q", "-am", "second"])?;
    git(&["tag", "v1"])?;
    // An uncommitted change, so `git diff` and `git status` have something to show.
    write("repo/README", "first\nsecond\nthird\n")?;
    Ok(())
}

fn run(dir: &Path, program: &str, args: &[&str]) -> Result<(), SandboxError> {
    let step = format!("{program} {}", args.join(" "));
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|source| SandboxError::Scratch {
            step: step.clone(),
            source,
        })?;
    if !output.status.success() {
        return Err(SandboxError::ScratchCommand {
            step,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(())
}
