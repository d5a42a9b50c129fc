//! Shared helpers for the Nomos benchmarks.

use async_trait::async_trait;
use nomos_core::ports::exec::{ExecError, ExecLimits, Executor, HostInfo};
use nomos_core::record::ExecOutput;

/// An executor that answers every command at once, exit 0, with `bytes` bytes of output,
/// on the one host `local`: a turn without a process, so what Nomos costs is told apart
/// from what spawning costs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Immediate {
    /// The length of each command's stdout.
    pub bytes: usize,
}

#[async_trait]
impl Executor for Immediate {
    async fn run(
        &self,
        _host: &str,
        _command: &str,
        _limits: ExecLimits,
    ) -> Result<ExecOutput, ExecError> {
        let line = "nomos bench output line\n";
        Ok(ExecOutput {
            exit_code: Some(0),
            stdout: line.repeat(self.bytes / line.len() + 1)[..self.bytes].to_owned(),
            ..ExecOutput::default()
        })
    }

    fn hosts(&self) -> Vec<HostInfo> {
        vec![HostInfo {
            slug: "local".to_owned(),
            address: "local".to_owned(),
            tags: Vec::new(),
            host_keys: Vec::new(),
        }]
    }
}
