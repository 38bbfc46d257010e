//! The agents of a run, built once from the configuration: one backend per bot, the arbiter
//! (extract, verify and the default judge), the judges and the implementer. A backend that
//! cannot be built (a missing API key, an empty command) does not stop the run: the bot is
//! skipped with that reason, and a missing arbiter falls back as SPEC §6 says.
//! With `--record DIR` every backend is wrapped so its answers are written for replay.

use crate::agent::replay::Recorder;
use crate::agent::{self, Backend};
use crate::config::{AgentConfig, Config};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A built backend, or why it could not be built.
pub type Built = Result<Arc<dyn Backend>, String>;

/// One agent of the run.
pub struct Agent {
    /// The bot id, `arbiter`, `judge_2`… or `implementer`.
    pub name: String,
    pub backend: Built,
    pub timeout: Duration,
}

impl Agent {
    fn build(name: &str, config: &AgentConfig, root: &Path, record: Option<&Path>) -> Agent {
        let backend = agent::build(config, root)
            .map(|b| match record {
                Some(dir) => Arc::new(Recorder::new(b, dir.to_owned())) as Arc<dyn Backend>,
                None => b,
            })
            .map_err(|e| e.to_string());
        Agent {
            name: name.to_owned(),
            backend,
            timeout: Duration::from_secs(config.timeout_secs),
        }
    }
}

/// Every agent of a run.
pub struct Agents {
    pub bots: Vec<Agent>,
    pub arbiter: Agent,
    /// At least one: the arbiter's configuration when `[arbiter] judges` is empty.
    pub judges: Vec<Agent>,
    pub implementer: Agent,
}

impl Agents {
    /// Builds every agent of `config`; relative paths resolve against `root`.
    pub fn build(config: &Config, root: &Path, record: Option<&Path>) -> Agents {
        let judge_configs: Vec<AgentConfig> = if config.judges.is_empty() {
            vec![config.arbiter.clone()]
        } else {
            config.judges.clone()
        };
        let judges = judge_configs
            .into_iter()
            .enumerate()
            .map(|(i, mut c)| {
                // SPEC §7: judge at temperature 0 where the backend has one.
                c.temperature.get_or_insert(0.0);
                let name = if i == 0 {
                    "arbiter".to_owned()
                } else {
                    format!("judge_{}", i + 1)
                };
                Agent::build(&name, &c, root, record)
            })
            .collect();
        Agents {
            bots: config
                .bots
                .iter()
                .map(|b| Agent::build(&b.id, &b.agent, root, record))
                .collect(),
            arbiter: Agent::build("arbiter", &config.arbiter, root, record),
            judges,
            implementer: Agent::build("implementer", &config.implementer, root, record),
        }
    }
}
