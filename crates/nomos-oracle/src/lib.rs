//! The execution oracle of the classifier (CLASSIFY-9): a proof of `read_only` that does not
//! use the code it proves. The real shell runs the command in a throwaway sandbox, `strace
//! -f` records what it does, and a judge that reads only the trace and the command's text
//! says whether anything changed.
//!
//! # Brief overview
//!
//! * [`sandbox::Sandbox`]: `bwrap` with a read-only root, fresh `/tmp`, `/run` and `/dev`,
//!   no network (`--unshare-all`), its own pid namespace, dying with its parent, and a
//!   read-only scratch directory ([`scratch`]) with the files the commands name; commands
//!   run in batches, each with its own trace, time limit and output cap.
//! * [`driver`]: what runs inside a sandbox (`nomos-oracle --drive DIR`): each command of a
//!   batch under `strace -f`, in its own process group, time limit and output cap.
//! * [`trace`]: reads `strace -f` output into calls.
//! * [`judge`]: the calls that change something ([`judge::Breach`]), and what does not
//!   count and why.
//! * [`generate`]: commands from the rules' option tables and the shells' constructs, from a
//!   seed; [`sources`]: the corpus, the preview forms and the golden cases.
//! * [`findings`]: the refutations of a run, one line per class, for the findings log.
//! * [`secrets`]: the secret-read table (SECRET-1) run traced: `secret` rows open their
//!   path, `ordinary` rows open no default secret path.
//! * [`oracle::run`]: classifies each candidate under `sh`, `bash` and `busybox sh`, runs the
//!   `read_only` ones and returns a [`oracle::Report`] naming every refutation.

#![deny(missing_docs)]

pub mod driver;
pub mod findings;
pub mod generate;
pub mod judge;
pub mod oracle;
pub mod rng;
pub mod sandbox;
pub mod scratch;
pub mod secrets;
pub mod sources;
pub mod trace;
