//! `backend = "replay"`: answers from recorded responses, for the demo and for tests, and
//! [`Recorder`], which wraps a real backend and writes what it answers (`--record DIR`).
//!
//! A response is the file `<dir>/<who>.<role>.r<round>.txt`, where `who` is the bot id for
//! `propose`, `arbiter` for `extract`/`judge`/`verify` (`judge_2`, `judge_3`… for the further
//! judges of `[arbiter] judges`) and `implementer` for `implement`. Lookup
//! tries, in order: `<who>.<role>.r<round>.a<attempt>.txt` (the repair retry is attempt 1),
//! `<who>.<role>.r<round>.txt`, then `<who>.<role>.txt` (any round). A call with a variant
//! (the judge's `reversed` reading) tries `<who>.<role>.<variant>.…` first, then the same
//! names as the plain call, so a recording without the variant still answers it.

use super::{AgentCall, AgentError, AgentReply, Backend, Role, Usage};
use crate::fsutil::write_atomic;
use async_trait::async_trait;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Who a call speaks for, in file names.
pub fn who(call: &AgentCall) -> String {
    match (&call.bot_id, &call.speaker, call.role) {
        (Some(bot), _, _) => bot.clone(),
        (None, Some(speaker), _) => speaker.clone(),
        (None, None, Role::Implement) => "implementer".into(),
        (None, None, _) => "arbiter".into(),
    }
}

/// The file names tried for a call, most specific first.
pub fn candidates(call: &AgentCall) -> Vec<String> {
    let plain = format!("{}.{}", who(call), call.role);
    let mut bases = Vec::new();
    if let Some(variant) = call.variant {
        bases.push(format!("{plain}.{variant}"));
    }
    bases.push(plain);
    bases
        .iter()
        .flat_map(|base| {
            [
                format!("{base}.r{}.a{}.txt", call.round, call.attempt),
                format!("{base}.r{}.txt", call.round),
                format!("{base}.txt"),
            ]
        })
        .collect()
}

pub struct ReplayBackend {
    dir: PathBuf,
}

impl ReplayBackend {
    pub fn new(dir: PathBuf) -> ReplayBackend {
        ReplayBackend { dir }
    }
}

#[async_trait]
impl Backend for ReplayBackend {
    fn describe(&self) -> String {
        format!("replay {}", self.dir.display())
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        let started = Instant::now();
        let names = candidates(call);
        for name in &names {
            match tokio::fs::read_to_string(self.dir.join(name)).await {
                Ok(text) => {
                    return Ok(AgentReply {
                        text,
                        usage: Usage::default(),
                        duration: started.elapsed(),
                        session_id: Some(name.clone()),
                        ..AgentReply::default()
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(AgentError::Start {
                        backend: self.describe(),
                        message: format!("cannot read {}: {e}", self.dir.join(name).display()),
                    })
                }
            }
        }
        Err(AgentError::Start {
            backend: self.describe(),
            message: format!("no recorded response (looked for {})", names.join(", ")),
        })
    }
}

/// Wraps a backend and records every successful answer under the replay naming, so that a
/// real run can be replayed offline.
pub struct Recorder {
    inner: Arc<dyn Backend>,
    dir: PathBuf,
}

impl Recorder {
    pub fn new(inner: Arc<dyn Backend>, dir: PathBuf) -> Recorder {
        Recorder { inner, dir }
    }

    fn save(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        write_atomic(&dir.join(name), text.as_bytes())
    }
}

#[async_trait]
impl Backend for Recorder {
    fn describe(&self) -> String {
        format!(
            "{} (recording to {})",
            self.inner.describe(),
            self.dir.display()
        )
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        let reply = self.inner.call(call).await?;
        let name = candidates(call).swap_remove(0);
        if let Err(e) = Self::save(&self.dir, &name, &reply.text) {
            // A failed recording must not fail the run.
            tracing::warn!("cannot record {}: {e}", self.dir.join(&name).display());
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Phase;
    use std::time::Duration;

    fn call(role: Role, bot: Option<&str>, round: u32, attempt: u32) -> AgentCall {
        AgentCall {
            role,
            prompt: "p".into(),
            workdir: ".".into(),
            bot_id: bot.map(String::from),
            issue: 1,
            round,
            phase: Phase::Initial,
            timeout: Duration::from_secs(1),
            attempt,
            speaker: None,
            variant: None,
            activity: None,
        }
    }

    #[tokio::test]
    async fn the_most_specific_recording_wins() {
        let dir = tempfile::tempdir().unwrap();
        let write = |n: &str, t: &str| std::fs::write(dir.path().join(n), t).unwrap();
        write("bot_a.propose.txt", "any round");
        write("bot_a.propose.r2.txt", "round two");
        write("bot_a.propose.r2.a1.txt", "round two, repair");
        write("arbiter.judge.txt", "judge");
        let b = ReplayBackend::new(dir.path().into());
        let text = |c: AgentCall| {
            let b = &b;
            async move { b.call(&c).await.map(|r| r.text) }
        };
        assert_eq!(
            text(call(Role::Propose, Some("bot_a"), 1, 0))
                .await
                .unwrap(),
            "any round"
        );
        assert_eq!(
            text(call(Role::Propose, Some("bot_a"), 2, 0))
                .await
                .unwrap(),
            "round two"
        );
        assert_eq!(
            text(call(Role::Propose, Some("bot_a"), 2, 1))
                .await
                .unwrap(),
            "round two, repair"
        );
        assert_eq!(text(call(Role::Judge, None, 7, 0)).await.unwrap(), "judge");
        let err = text(call(Role::Implement, None, 1, 0)).await.unwrap_err();
        assert!(
            err.to_string().contains("implementer.implement.r1.a0.txt"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_variant_prefers_its_own_recording_and_falls_back_to_the_plain_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("arbiter.judge.r1.txt"), "forward").unwrap();
        let b = ReplayBackend::new(dir.path().into());
        let mut c = call(Role::Judge, None, 1, 0);
        c.variant = Some("reversed");
        assert_eq!(candidates(&c)[0], "arbiter.judge.reversed.r1.a0.txt");
        assert_eq!(b.call(&c).await.unwrap().text, "forward");
        std::fs::write(dir.path().join("arbiter.judge.reversed.r1.txt"), "reverse").unwrap();
        assert_eq!(b.call(&c).await.unwrap().text, "reverse");
    }

    #[tokio::test]
    async fn a_recorder_writes_what_replay_reads() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("arbiter.verify.txt"), "{\"satisfied\":[]}").unwrap();
        let out = tempfile::tempdir().unwrap();
        let rec = Recorder::new(
            Arc::new(ReplayBackend::new(src.path().into())),
            out.path().join("rec"),
        );
        let c = call(Role::Verify, None, 3, 0);
        rec.call(&c).await.unwrap();
        let replayed = ReplayBackend::new(out.path().join("rec"))
            .call(&c)
            .await
            .unwrap();
        assert_eq!(replayed.text, "{\"satisfied\":[]}");
        assert!(out.path().join("rec/arbiter.verify.r3.a0.txt").exists());
    }
}
