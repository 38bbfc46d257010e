//! The process wrapper, tried on real programs: exit codes, streams, timeouts that kill the
//! whole group, bounded output, line hooks.

#[cfg(all(test, unix))]
mod run {
    use super::super::*;

    fn sh(script: &str) -> Cmd {
        Cmd::new("sh").arg("-c").arg(script)
    }

    #[tokio::test]
    async fn captures_exit_code_and_both_streams() {
        let out = run(&sh("echo out; echo err >&2; exit 3")).await.unwrap();
        assert_eq!(out.code, Some(3));
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert!(!out.success() && !out.timed_out && !out.truncated);
        assert_eq!(out.tail(5), "err");
    }

    #[tokio::test]
    async fn feeds_stdin_and_sets_the_environment() {
        let cmd = sh("cat; printf ' %s' \"$RALPH_T\"")
            .stdin("hello")
            .env("RALPH_T", "v");
        let out = run(&cmd).await.unwrap();
        assert!(out.success());
        assert_eq!(out.stdout, "hello v");
    }

    #[tokio::test]
    async fn a_process_in_one_of_ralphs_checkouts_gets_its_global_git_configuration() {
        let checkout = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(checkout.path().join(".git").join(bwrap::OWN_MARK)).unwrap();
        let probe = |dir: &std::path::Path| {
            sh("printf '%s' \"$GIT_CONFIG_GLOBAL\"")
                .current_dir(dir)
                .confine(Confinement::new(Kind::Check, dir))
        };
        let out = run(&probe(checkout.path())).await.unwrap();
        assert_eq!(
            out.stdout,
            bwrap::own_global_config(checkout.path())
                .display()
                .to_string()
        );
        // The user's own checkout (a `.git` without ralph's mark): git's usual global files.
        let user = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(user.path().join(".git")).unwrap();
        assert_eq!(run(&probe(user.path())).await.unwrap().stdout, "");
    }

    #[tokio::test]
    async fn removed_variables_do_not_reach_the_child() {
        std::env::set_var("RALPH_PROCESS_TEST_SECRET", "x");
        let out = run(&sh("printf '[%s]' \"$RALPH_PROCESS_TEST_SECRET\"")
            .env_remove("RALPH_PROCESS_TEST_SECRET"))
        .await
        .unwrap();
        assert_eq!(out.stdout, "[]");
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_group() {
        let started = Instant::now();
        // The grandchild (sleep) holds the pipes: it must die with its parent.
        let out = run(&sh("sleep 30 & sleep 30; echo never").timeout(Duration::from_millis(200)))
            .await
            .unwrap();
        assert!(out.timed_out);
        assert!(!out.success());
        assert_eq!(out.code, None);
        assert!(!out.stdout.contains("never"));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn output_is_bounded_keeping_head_and_tail() {
        let out = run(
            &sh("echo START; head -c 100000 /dev/zero | tr '\\0' x; echo; echo END")
                .max_output(1000),
        )
        .await
        .unwrap();
        assert!(out.truncated);
        assert!(out.stdout.starts_with("START\n"));
        assert!(out.stdout.trim_end().ends_with("END"));
        assert!(out.stdout.contains("bytes omitted"));
        assert!(out.stdout.len() < 1100);
    }

    #[tokio::test]
    async fn a_missing_program_is_reported_by_name() {
        let err = run(&Cmd::new("ralph-no-such-program-xyz"))
            .await
            .unwrap_err();
        assert!(matches!(err, ProcessError::NotFound { .. }));
        assert!(err.to_string().contains("ralph-no-such-program-xyz"));
    }

    #[test]
    fn display_quotes_what_a_shell_would_split() {
        let c = Cmd::new("git").args(["commit", "-m", "it's done", "--author=a@b"]);
        assert_eq!(c.display(), r"git commit -m 'it'\''s done' --author=a@b");
    }

    #[test]
    fn capture_keeps_everything_under_the_bound() {
        let mut c = Capture::new(100);
        for _ in 0..10 {
            c.push(b"0123456789");
        }
        let (text, truncated) = c.finish();
        assert_eq!(text.len(), 100);
        assert!(!truncated);
        let mut c = Capture::new(10);
        c.push(b"abcdefghijklmnopqrstuvwxyz");
        let (text, truncated) = c.finish();
        assert!(truncated);
        assert!(text.starts_with("abcde\n"));
        assert!(text.ends_with("vwxyz"));
        assert!(text.contains("16 bytes omitted"));
    }
}

#[cfg(test)]
mod line_hooks {
    use super::super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn lines_are_handed_over_whole_across_chunks_and_bounded() {
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let log = seen.clone();
        let mut lines = Lines {
            hook: Arc::new(move |l: &str| log.lock().unwrap().push(l.to_owned())),
            partial: Vec::new(),
        };
        lines.push(b"{\"a\":");
        lines.push(b"1}\r\n\nsecond\nthi");
        lines.push(b"rd");
        lines.emit();
        assert_eq!(*seen.lock().unwrap(), ["{\"a\":1}", "second", "third"]);
        lines.push(&vec![b'x'; MAX_HOOK_LINE + 10]);
        lines.push(b"\n");
        assert_eq!(seen.lock().unwrap()[3].len(), MAX_HOOK_LINE);
    }

    #[tokio::test]
    async fn a_line_hook_hears_stdout_as_it_arrives() {
        let seen = Arc::new(Mutex::new(Vec::<(String, Duration)>::new()));
        let log = seen.clone();
        let started = Instant::now();
        let cmd = Cmd::new("sh")
            .args(["-c", "echo one; sleep 0.5; echo two"])
            .on_stdout_line(Arc::new(move |l: &str| {
                log.lock().unwrap().push((l.to_owned(), started.elapsed()))
            }));
        let out = run(&cmd).await.unwrap();
        assert_eq!(out.stdout, "one\ntwo\n", "the output is still captured");
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert!(
            seen[1].1 - seen[0].1 >= Duration::from_millis(300),
            "the first line came before the second was written: {seen:?}"
        );
    }
}
