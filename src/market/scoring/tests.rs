use super::*;
use crate::fixtures::sample;
use crate::market::{tables, Consultation, FileChange};
use proptest::prelude::*;

fn params() -> &'static ScoringParams {
    &tables().scoring
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn targets(open: &[&str], components: &[&str], implicit: &[&str]) -> Targets {
    Targets {
        open_checkboxes: open.iter().map(|s| s.to_string()).collect(),
        components: components.iter().map(|c| normalise_text(c)).collect(),
        implicit: implicit.iter().map(|s| s.to_string()).collect(),
    }
}

fn with_alignment(boxes: &[&str], comps: &[&str], implicit: &[&str]) -> Proposal {
    let mut p = sample();
    p.spec_alignment.checkboxes_addressed = boxes.iter().map(|s| s.to_string()).collect();
    p.spec_alignment.components_addressed = comps.iter().map(|s| s.to_string()).collect();
    p.spec_alignment.implicit_requirements_addressed =
        implicit.iter().map(|s| s.to_string()).collect();
    p
}

#[test]
fn spec_alignment_table() {
    let t = targets(
        &["req_1", "req_2"],
        &["parse the flag", "print timings", "document it", "test it"],
        &[
            "req_implicit_1",
            "req_implicit_2",
            "req_implicit_3",
            "req_implicit_4",
        ],
    );
    // (boxes, components, implicit, expected)
    type Case<'a> = (&'a [&'a str], &'a [&'a str], &'a [&'a str], f64);
    let cases: &[Case] = &[
        (&[], &[], &[], 0.0),
        (
            &["req_1", "req_2"],
            &[
                "Parse the flag!",
                "print  timings",
                "document it",
                "TEST it",
            ],
            &[
                "req_implicit_1",
                "req_implicit_2",
                "req_implicit_3",
                "req_implicit_4",
            ],
            1.0,
        ),
        // 0.5·1/2 + 0.3·2/4 + 0.2·1/4 = 0.25 + 0.15 + 0.05
        (
            &["req_1"],
            &["parse the flag", "print timings"],
            &["req_implicit_1"],
            0.45,
        ),
        // A checked or unknown box and an unknown component count for nothing; duplicates once.
        (&["req_1", "req_1", "req_3"], &["something else"], &[], 0.25),
    ];
    for (boxes, comps, implicit, expected) in cases {
        let got = spec_alignment(&with_alignment(boxes, comps, implicit), &t, params());
        assert!(
            close(got.value, *expected),
            "{boxes:?} {comps:?} {implicit:?}: {got:?}"
        );
    }
}

#[test]
fn spec_alignment_renormalises_when_a_term_has_nothing_to_count() {
    // No components: 0.5 and 0.2 re-normalised to 0.5/0.7 and 0.2/0.7.
    let t = targets(&["req_1", "req_2"], &[], &["req_implicit_1"]);
    let got = spec_alignment(&with_alignment(&["req_1"], &[], &[]), &t, params());
    assert!(close(got.value, (0.5 * 0.5) / 0.7), "{got:?}");
    assert!(got.detail.contains("components n/a") && got.detail.contains("÷ 0.7"));
    // Only implicit requirements left: they carry the whole score.
    let t = targets(&[], &[], &["req_implicit_1", "req_implicit_2"]);
    let got = spec_alignment(&with_alignment(&[], &[], &["req_implicit_2"]), &t, params());
    assert!(close(got.value, 0.5));
    // Nothing to count at all.
    let got = spec_alignment(
        &with_alignment(&["req_1"], &[], &[]),
        &Targets::default(),
        params(),
    );
    assert_eq!(got.value, 0.0);
}

fn with_files(n: usize) -> Proposal {
    let mut p = sample();
    p.files_affected = (0..n)
        .map(|i| FileChange {
            path: format!("src/f{i}.rs"),
            change_type: "modify".into(),
            description: String::new(),
        })
        .collect();
    p
}

#[test]
fn risk_table() {
    // (files, breaking, security_critical, mitigation, expected)
    let cases = [
        // 1 − 0.4·1/6
        (1, false, false, "", 1.0 - 0.4 / 6.0),
        // 1 − 0.4·5/10
        (5, false, false, "", 0.8),
        // 1 − (0.4·5/10 + 0.35)
        (5, true, false, "", 0.45),
        // 1 − (0.4·5/10 + 0.25)
        (5, false, true, "", 0.55),
        // mitigated security-critical work is not a risk factor
        (5, false, true, "tests for every path", 0.8),
        // 1 − (0.4·15/20 + 0.35 + 0.25)
        (15, true, true, " ", 0.1),
    ];
    for (files, breaking, security, mitigation, expected) in cases {
        let mut p = with_files(files);
        p.risk_assessment.breaking_changes = breaking;
        p.risk_assessment.security_critical = security;
        p.risk_assessment.mitigation = mitigation.into();
        let got = risk(&p, params());
        assert!(
            close(got.value, expected),
            "{files} {breaking} {security}: {got:?}"
        );
    }
    // The same path twice is one file.
    let mut p = with_files(1);
    p.files_affected.push(p.files_affected[0].clone());
    assert!(close(risk(&p, params()).value, 1.0 - 0.4 / 6.0));
}

#[test]
fn efficiency_table() {
    // (lines, files, modules, paths, expected)
    let cases = [
        // 1 − (0.5·200/400 + 0.3·5/10 + 0.2·3/6) = 1 − 0.5
        (200, 5, 3, 1, 0.5),
        // 1 − (0 + 0.3·1/6 + 0): lines and modules of 0 cost nothing
        (0, 1, 0, 1, 1.0 - 0.05),
        // files below the named paths count as the paths: F = 5
        (200, 1, 3, 5, 0.5),
        // 1 − (0.5·600/800 + 0.3·10/15 + 0.2·9/12)
        (600, 10, 9, 1, 1.0 - (0.375 + 0.2 + 0.15)),
    ];
    for (lines, files, modules, paths, expected) in cases {
        let mut p = with_files(paths);
        p.estimated_complexity.lines_of_code = lines;
        p.estimated_complexity.files = files;
        p.estimated_complexity.modules = modules;
        let got = efficiency(&p, params());
        assert!(
            close(got.value, expected),
            "{lines} {files} {modules}: {got:?}"
        );
    }
}

fn consult(who: &str, answer: &str) -> Consultation {
    Consultation {
        specialist: who.into(),
        question: "q".into(),
        answer: answer.into(),
        applied: String::new(),
    }
}

#[test]
fn expected_specialists_come_from_extensions_and_path_words() {
    let table = &tables().specialists;
    let got = expected_specialists(
        [
            "src/auth/token_store.rs",
            "migrations/001_init.sql",
            "README.md",
        ],
        table,
    );
    let names: Vec<&str> = got.iter().map(String::as_str).collect();
    assert_eq!(names, ["database", "rust", "security"]);
    assert!(expected_specialists(["docs/guide.md"], table).is_empty());
    assert_eq!(
        expected_specialists(["web/components/Button.tsx"], table)
            .into_iter()
            .collect::<Vec<_>>(),
        ["frontend", "typescript"]
    );
}

#[test]
fn specialist_validation_table() {
    let table = &tables().specialists;
    let mut p = sample();
    p.files_affected[0].path = "src/auth/login.rs".into(); // expects rust + security
    let cases: &[(&[(&str, &str)], f64)] = &[
        (&[], 0.0),
        (&[("Rust expert", "use thiserror")], 0.5),
        (
            &[("rustacean", "ok"), ("AppSec reviewer", "hash with argon2")],
            1.0,
        ),
        // A consultation without an answer does not count; an unrelated one neither.
        (&[("rust", " "), ("database", "index it")], 0.0),
    ];
    for (consultations, expected) in cases {
        p.specialist_consultations = consultations.iter().map(|(w, a)| consult(w, a)).collect();
        let got = specialist_validation(&p, table);
        assert!(close(got.value, *expected), "{consultations:?}: {got:?}");
    }
    p.files_affected[0].path = "docs/usage.md".into();
    p.specialist_consultations.clear();
    assert_eq!(specialist_validation(&p, table).value, 1.0);
}

#[test]
fn the_total_is_the_weighted_sum_and_judge_scores_pass_through() {
    let weights = tables().default_weights;
    let t = targets(&["req_1"], &["x"], &["req_implicit_1"]);
    let judged = Subjective {
        technical_quality: 0.8,
        technical_quality_reasoning: "solid".into(),
        innovation: 0.4,
        innovation_reasoning: "plain".into(),
        judges: 1,
    };
    let p = with_alignment(&["req_1"], &[], &[]);
    let s = score_proposal(&p, &t, &judged, &weights, params(), &tables().specialists);
    assert_eq!(s.scores.technical_quality, 0.8);
    assert_eq!(s.scores.innovation, 0.4);
    let expected: f64 = Dimension::ALL
        .iter()
        .map(|d| weights.get(*d) * s.scores.get(*d))
        .sum();
    assert!(close(s.total, expected));
    assert_eq!(s.details["technical_quality"], "solid");
    assert_eq!(s.details.len(), 6);
    assert!(s.scores.first_out_of_unit_range().is_none());
}

#[test]
fn unavailable_judge_gives_the_neutral_score_with_the_reason() {
    let u = Subjective::unavailable(params(), "timed out");
    assert_eq!((u.technical_quality, u.innovation, u.judges), (0.5, 0.5, 0));
    assert_eq!(u.innovation_reasoning, "judge unavailable: timed out");
}

#[test]
fn median_of_judges() {
    let v = |tq: f64, inn: f64, why: &str| (tq, why.to_owned(), inn, why.to_owned());
    let m = median_view(&[v(0.9, 0.1, "a"), v(0.5, 0.7, "b"), v(0.6, 0.3, "c")]).unwrap();
    assert_eq!((m.technical_quality, m.innovation), (0.6, 0.3));
    assert_eq!(m.technical_quality_reasoning, "c");
    assert_eq!(m.judges, 3);
    let m = median_view(&[v(0.2, 0.4, "a"), v(0.6, 0.8, "b")]).unwrap();
    assert!(close(m.technical_quality, 0.4) && close(m.innovation, 0.6));
    assert!(median_view(&[]).is_none());
}

proptest! {
    #[test]
    fn more_files_never_lower_the_risk(n in 0usize..40, extra in 1usize..10, breaking: bool, security: bool) {
        let mut a = with_files(n.max(1));
        let mut b = with_files(n.max(1) + extra);
        for p in [&mut a, &mut b] {
            p.risk_assessment.breaking_changes = breaking;
            p.risk_assessment.security_critical = security;
        }
        prop_assert!(risk(&b, params()).value <= risk(&a, params()).value);
    }

    #[test]
    fn more_lines_never_raise_efficiency(lines in 0u64..100_000, extra in 1u64..10_000, files in 0u64..50, modules in 0u64..20) {
        let mut a = sample();
        a.estimated_complexity.files = files;
        a.estimated_complexity.modules = modules;
        a.estimated_complexity.lines_of_code = lines;
        let mut b = a.clone();
        b.estimated_complexity.lines_of_code = lines + extra;
        let (ea, eb) = (efficiency(&a, params()).value, efficiency(&b, params()).value);
        prop_assert!(eb < ea, "{} !< {}", eb, ea);
        prop_assert!((0.0..=1.0).contains(&eb));
    }

    #[test]
    fn more_checkboxes_addressed_never_lower_alignment(open in 1usize..12, k in 0usize..12, comps in 0usize..4) {
        let ids: Vec<String> = (1..=open).map(|i| format!("req_{i}")).collect();
        let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let comp_names: Vec<String> = (0..comps).map(|i| format!("component {i}")).collect();
        let comp_refs: Vec<&str> = comp_names.iter().map(String::as_str).collect();
        let t = targets(&id_refs, &comp_refs, &["req_implicit_1"]);
        let k = k.min(open);
        let fewer = with_alignment(&id_refs[..k.saturating_sub(1)], &comp_refs, &[]);
        let more = with_alignment(&id_refs[..k], &comp_refs, &[]);
        let (a, b) = (spec_alignment(&fewer, &t, params()).value, spec_alignment(&more, &t, params()).value);
        prop_assert!(b >= a);
        prop_assert!((0.0..=1.0).contains(&b));
    }
}

/// The worked example of `scoring/README.md`: three proposals for an issue with two open
/// checkboxes. Keeps the document and the code in agreement.
#[test]
fn the_worked_example_of_the_scoring_readme() {
    let reqs = crate::spec::Requirements::from_body(
        "- [ ] Parse a `--verbose` flag\n- [ ] Print timings when verbose\n",
    );
    let targets = Targets::from_requirements(&reqs);
    let weights = tables().default_weights;
    let files = |paths: &[&str]| -> Vec<FileChange> {
        paths
            .iter()
            .map(|p| FileChange {
                path: p.to_string(),
                change_type: "modify".into(),
                description: String::new(),
            })
            .collect()
    };
    let judge = |tq: f64, inn: f64| Subjective {
        technical_quality: tq,
        technical_quality_reasoning: String::new(),
        innovation: inn,
        innovation_reasoning: String::new(),
        judges: 1,
    };
    let mut a = with_alignment(
        &["req_1", "req_2"],
        &["Parse a `--verbose` flag", "Print timings when verbose"],
        &["req_implicit_2", "req_implicit_3"],
    );
    a.files_affected = files(&["src/cli.rs", "src/run.rs"]);
    (
        a.estimated_complexity.lines_of_code,
        a.estimated_complexity.files,
        a.estimated_complexity.modules,
    ) = (120, 2, 2);
    a.specialist_consultations = vec![consult("rust", "derive the flag with clap")];

    let mut b = with_alignment(&["req_1"], &["Parse a `--verbose` flag"], &[]);
    b.files_affected = files(&["src/main.rs"]);
    (
        b.estimated_complexity.lines_of_code,
        b.estimated_complexity.files,
        b.estimated_complexity.modules,
    ) = (30, 1, 1);

    let mut c = with_alignment(
        &["req_1", "req_2"],
        &["Parse a `--verbose` flag", "Print timings when verbose"],
        &[
            "req_implicit_1",
            "req_implicit_2",
            "req_implicit_3",
            "req_implicit_4",
        ],
    );
    c.files_affected = files(&[
        "src/auth/a.rs",
        "src/auth/b.rs",
        "src/c.rs",
        "src/d.rs",
        "src/e.rs",
        "src/f.rs",
        "src/g.rs",
        "src/h.rs",
    ]);
    (
        c.estimated_complexity.lines_of_code,
        c.estimated_complexity.files,
        c.estimated_complexity.modules,
    ) = (900, 8, 4);
    c.risk_assessment.breaking_changes = true;
    c.risk_assessment.security_critical = true;
    c.specialist_consultations = vec![consult("rust", "keep the error type")];

    let score = |p: &Proposal, j: Subjective| {
        score_proposal(p, &targets, &j, &weights, params(), &tables().specialists)
    };
    let (sa, sb, sc) = (
        score(&a, judge(0.8, 0.6)),
        score(&b, judge(0.7, 0.8)),
        score(&c, judge(0.5, 0.3)),
    );
    let r = |v: f64| (v * 1000.0).round() / 1000.0;
    let row = |s: &ProposalScore| {
        [
            r(s.scores.spec_alignment),
            r(s.scores.risk),
            r(s.scores.efficiency),
            r(s.scores.specialist_validation),
            r(s.total),
        ]
    };
    assert_eq!(row(&sa), [0.9, 0.886, 0.647, 1.0, 0.812]);
    assert_eq!(row(&sb), [0.4, 0.933, 0.835, 0.0, 0.65]);
    assert_eq!(row(&sc), [1.0, 0.154, 0.292, 0.5, 0.53]);
}
