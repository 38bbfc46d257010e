//! The agents of a run, built once from the configuration: one backend per bot, the arbiter
//! (extract, verify and the default judge), the judges and the implementer. An agent that
//! cannot start (its program not installed, a missing API key, no recordings) is kept with the
//! reason instead of a backend: the competition refuses to start without an implementer, an
//! arbiter or any bot, and skips the other unusable bots with a warning.
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
    /// The agent `name` configured so; relative paths resolve against `root`.
    pub fn build(name: &str, config: &AgentConfig, root: &Path, record: Option<&Path>) -> Agent {
        let backend = agent::can_start(config, root)
            .map_err(|why| agent::AgentError::Start {
                backend: config.backend.as_str().to_owned(),
                message: why,
            })
            .and_then(|()| agent::build(config, root))
            .map(|b| match config.price {
                Some(price) => Arc::new(agent::Priced::new(b, price)) as Arc<dyn Backend>,
                None => b,
            })
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
    /// `--record DIR`: where the answers and each round's scoring inputs are written.
    pub record: Option<std::path::PathBuf>,
}

impl Agents {
    /// The agents whose cost cannot be known (no cost reported by their backend, no `price`),
    /// for the warning at the start of a run with `max_cost_usd`.
    pub fn without_cost(&self) -> Vec<String> {
        std::iter::once(&self.implementer)
            .chain(std::iter::once(&self.arbiter))
            .chain(self.judges.iter().skip(1))
            .chain(&self.bots)
            .filter(|a| a.backend.as_ref().is_ok_and(|b| !b.reports_cost()))
            .map(|a| a.name.clone())
            .collect()
    }

    /// Why the run cannot go ahead with these agents, one line per unusable agent that is
    /// needed; `Ok` with a line per unusable bot that will be skipped.
    pub fn usable(&self) -> Result<Vec<String>, Vec<String>> {
        let why = |a: &Agent| a.backend.as_ref().err().map(|e| format!("{}: {e}", a.name));
        let mut fatal: Vec<String> = [&self.implementer, &self.arbiter]
            .into_iter()
            .filter_map(why)
            .collect();
        let skipped: Vec<String> = self.bots.iter().filter_map(why).collect();
        if skipped.len() == self.bots.len() {
            fatal.push(format!("no bot can start ({})", skipped.join("; ")));
        }
        if fatal.is_empty() {
            Ok(skipped)
        } else {
            Err(fatal)
        }
    }

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
                // docs/specification.md §7: judge at temperature 0 where the backend has one.
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
            record: record.map(Path::to_path_buf),
        }
    }
}
