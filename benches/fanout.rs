//! The proposal phase with six bots: four answer within half a second, one takes 2 s, one
//! hangs into its 3 s timeout. The phase must finish in at most 1.5× the slowest bot (the
//! timeout), not in the sum of their times. Run: `cargo bench --bench fanout`.

use ralph::agent::command::CommandBackend;
use ralph::agent::fanout::{gather, BotOutcome, BotTask};
use ralph::agent::{AgentCall, Phase, Role};
use ralph::progress::Progress;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const PROPOSAL: &str = r#"{"approach_summary":"Add a flag","pseudo_code":"p","files_affected":[{"path":"src/a.rs","change_type":"modify","description":"d"}],"estimated_complexity":{"lines_of_code":10,"files":1,"modules":1,"difficulty":"low"},"risk_assessment":{"breaking_changes":false,"security_critical":false,"deployment_impact":"none","overall_risk":"low","mitigation":"m"},"spec_alignment":{"checkboxes_addressed":["req_1"],"components_addressed":[],"implicit_requirements_addressed":[],"reasoning":"r"},"specialist_consultations":[],"innovation":"i","success_probability":0.7}"#;

fn bot(dir: &Path, name: &str, delay: &str) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\ncat >/dev/null\nsleep {delay}\necho '{PROPOSAL}'\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let timeout = Duration::from_secs(3);
    let bots = [
        ("fast_1", "0.1"),
        ("fast_2", "0.2"),
        ("fast_3", "0.3"),
        ("fast_4", "0.5"),
        ("slow", "2"),
        ("hung", "60"),
    ];
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ids: BTreeSet<String> = ["req_1".to_owned()].into();
    let mut times = Vec::new();
    for run in 0..3 {
        let tasks: Vec<BotTask> = bots
            .iter()
            .map(|(name, delay)| BotTask {
                bot_id: (*name).to_owned(),
                backend: Arc::new(CommandBackend::new(vec![bot(dir.path(), name, delay)]).unwrap()),
                call: AgentCall {
                    role: Role::Propose,
                    prompt: "propose".into(),
                    workdir: dir.path().to_path_buf(),
                    bot_id: Some((*name).to_owned()),
                    issue: 1,
                    round: 1,
                    phase: Phase::Initial,
                    timeout,
                    attempt: 0,
                    speaker: None,
                    variant: None,
                    activity: None,
                },
            })
            .collect();
        let started = Instant::now();
        let results = runtime.block_on(gather(tasks, &ids, 6, &Progress::off()));
        let elapsed = started.elapsed();
        times.push(elapsed);
        if run == 0 {
            for r in &results {
                let what = match &r.outcome {
                    BotOutcome::Proposal { .. } => "proposal".to_owned(),
                    BotOutcome::Skipped { reason, .. } => format!("skipped ({reason})"),
                };
                println!(
                    "  {:<7} {:>6.2}s  {what}",
                    r.bot_id,
                    r.duration.as_secs_f64()
                );
            }
        }
    }
    times.sort();
    let median = times[1];
    let slowest = timeout.as_secs_f64();
    let sum: f64 = 0.1 + 0.2 + 0.3 + 0.5 + 2.0 + slowest;
    let ratio = median.as_secs_f64() / slowest;
    println!(
        "proposal phase, 6 bots: median of 3 = {:.2}s; slowest bot (timeout) = {slowest:.2}s; ratio {ratio:.2}× (target ≤ 1.5×); the sum of the bots' times would be {sum:.2}s",
        median.as_secs_f64()
    );
    if ratio > 1.5 {
        eprintln!("over target");
        std::process::exit(1);
    }
}
