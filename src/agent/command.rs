//! `backend = "command"`: any program. The prompt goes to its stdin, the response is its
//! stdout; a non-zero exit is a failure carrying the tail of its stderr. It gets the protocol
//! environment and runs in the role's working directory.

use super::subprocess::{agent_cmd, run_agent};
use super::{AgentCall, AgentError, AgentReply, Backend, Usage};
use async_trait::async_trait;

pub struct CommandBackend {
    program: String,
    args: Vec<String>,
    /// The program and the arguments that name files: the sandbox keeps them readable.
    files: Vec<std::path::PathBuf>,
}

impl CommandBackend {
    pub fn new(command: Vec<String>) -> Result<CommandBackend, AgentError> {
        let mut parts = command.into_iter();
        let program = parts
            .next()
            .filter(|p| !p.is_empty())
            .ok_or_else(|| AgentError::Config {
                message: "backend = \"command\" needs `command = [\"program\", \"arg\", …]`".into(),
            })?;
        let args: Vec<String> = parts.collect();
        let files = std::iter::once(&program)
            .chain(&args)
            .map(std::path::PathBuf::from)
            .filter(|p| p.is_absolute() && p.exists())
            .collect();
        Ok(CommandBackend {
            program,
            args,
            files,
        })
    }
}

#[async_trait]
impl Backend for CommandBackend {
    fn describe(&self) -> String {
        format!("command {}", self.program)
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        let cmd = agent_cmd(
            &self.program,
            &self.args,
            call,
            &super::subprocess::AgentStateView::Real(Vec::new()),
            &self.files,
        );
        let out = run_agent(&self.describe(), &cmd, call).await?;
        Ok(AgentReply {
            text: out.stdout,
            usage: Usage::default(),
            duration: out.duration,
            session_id: None,
            ..AgentReply::default()
        })
    }
}
