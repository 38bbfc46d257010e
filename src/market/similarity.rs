//! "The same proposal again" for the replan rule (docs/specification.md §6 step 9): two proposals
//! are the same when their normalised summary + pseudo-code are equal, or when the Jaccard
//! similarity of their word shingles reaches the threshold of `scoring/proposal.toml` (5-word
//! shingles, 0.70).

use super::scoring::normalise_text;
use super::tables::SimilarityParams;
use super::Proposal;
use std::collections::BTreeSet;

/// The text compared: summary and pseudo-code, normalised.
fn comparable_text(p: &Proposal) -> String {
    normalise_text(&format!("{}\n{}", p.approach_summary, p.pseudo_code))
}

/// The set of `k`-word shingles of a normalised text; a text shorter than `k` words is one
/// shingle.
fn shingles(text: &str, k: usize) -> BTreeSet<Vec<&str>> {
    let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
    if words.len() <= k {
        return std::iter::once(words).filter(|w| !w.is_empty()).collect();
    }
    words.windows(k).map(|w| w.to_vec()).collect()
}

/// Jaccard similarity of the texts' `k`-word shingles, in [0, 1] (two empty texts: 1).
pub fn jaccard(a: &str, b: &str, k: usize) -> f64 {
    let (sa, sb) = (shingles(a, k), shingles(b, k));
    if sa.is_empty() && sb.is_empty() {
        return 1.0;
    }
    let inter = sa.intersection(&sb).count();
    let union = sa.len() + sb.len() - inter;
    inter as f64 / union as f64
}

/// Whether `resubmitted` is the same proposal as `failed`, with the similarity found.
pub fn same_proposal(
    failed: &Proposal,
    resubmitted: &Proposal,
    p: &SimilarityParams,
) -> (bool, f64) {
    let (a, b) = (comparable_text(failed), comparable_text(resubmitted));
    if a == b {
        return (true, 1.0);
    }
    let j = jaccard(&a, &b, p.shingle_words);
    (j >= p.threshold, j)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::sample;
    use crate::market::tables;

    fn with(summary: &str, code: &str) -> Proposal {
        let mut p = sample();
        p.approach_summary = summary.into();
        p.pseudo_code = code.into();
        p
    }

    const SUMMARY: &str = "Add a verbose flag to the command line parser and thread it through \
        the runner so that every phase prints its timing and the commands it executes, \
        keeping the default output unchanged for scripts that parse it";
    const CODE: &str =
        "in cli.rs add a bool field verbose to Args; in runner.rs pass args.verbose \
        to Runner::new; in each phase call log_phase when verbose is set";

    #[test]
    fn formatting_and_case_do_not_make_a_proposal_new() {
        let a = with(SUMMARY, CODE);
        let b = with(
            &SUMMARY.to_uppercase().replace(' ', "  "),
            &format!("{CODE}!!!"),
        );
        assert_eq!(
            same_proposal(&a, &b, &tables().scoring.similarity),
            (true, 1.0)
        );
    }

    #[test]
    fn a_real_resubmission_with_small_edits_is_the_same() {
        let a = with(SUMMARY, CODE);
        let b = with(&SUMMARY.replace("timing", "elapsed time"), CODE);
        let (same, j) = same_proposal(&a, &b, &tables().scoring.similarity);
        assert!(same, "jaccard {j}");
        assert!(j < 1.0);
    }

    #[test]
    fn a_paraphrase_of_the_idea_is_a_new_proposal() {
        let a = with(SUMMARY, CODE);
        let b = with(
            "Introduce an environment variable RALPH_TRACE that switches on per phase timing \
             output, read once at start up, so scripts are unaffected and no flag is needed",
            "read env RALPH_TRACE in main; store it in a global OnceLock; phases check it and \
             print durations to stderr",
        );
        let (same, j) = same_proposal(&a, &b, &tables().scoring.similarity);
        assert!(!same, "jaccard {j}");
        assert!(j < 0.2, "{j}");
    }

    #[test]
    fn jaccard_edge_cases() {
        assert_eq!(jaccard("", "", 5), 1.0);
        assert_eq!(jaccard("a b", "", 5), 0.0);
        assert_eq!(jaccard("a b c", "a b c", 5), 1.0);
        // 6 words → 2 shingles each; one shared of three distinct.
        assert!((jaccard("a b c d e f", "a b c d e g", 5) - 1.0 / 3.0).abs() < 1e-12);
    }
}
