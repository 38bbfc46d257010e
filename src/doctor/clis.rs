//! `ralph doctor`'s agent CLIs: for each CLI the configuration runs, where its program was
//! found, its version (or why it has none), and the hosts its agents may reach under the
//! sandbox's egress policy.

use super::{Findings, Settings, Status};
use crate::agent::clis::{self, Registry};

/// One line per agent CLI the configuration runs.
pub async fn cli_checks(f: &mut Findings, settings: &Settings) {
    for cli in clis::needed_clis(&settings.config) {
        let found = clis::find(&cli, &settings.config, &settings.root).await;
        let reach = if found.reach.is_empty() {
            "no host".to_owned()
        } else {
            found.reach.join(", ")
        };
        let name = format!("{} CLI", cli.backend);
        let agents = cli.agents.join(", ");
        match (&found.path, &found.version) {
            (None, _) => {
                f.add(
                    "agents",
                    &name,
                    Status::Fail,
                    format!("`{}` is not installed (for {agents})", cli.program),
                );
                f.hint(match cli.registry {
                    Registry::Npm => format!("npm install -g {}", cli.package),
                    Registry::Pypi => format!("pipx install {}", cli.package),
                });
            }
            (Some(path), Ok(version)) => f.add(
                "agents",
                &name,
                Status::Ok,
                format!("{version} at {path}, for {agents}; may reach {reach}"),
            ),
            (Some(path), Err(why)) => {
                f.add(
                    "agents",
                    &name,
                    Status::Warn,
                    format!("{path} does not run: {why} (for {agents})"),
                );
                f.hint(format!(
                    "run `{} --version` yourself to see what it needs",
                    cli.program
                ));
            }
        }
        if found.reach.is_empty() {
            f.add(
                "agents",
                &name,
                Status::Warn,
                "in the sandbox it may reach no host: ralph does not know its model's".into(),
            );
            f.hint("set `base_url`, or name the host in [sandbox.network] agents_allow");
        }
    }
}
