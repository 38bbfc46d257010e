//! Editing `.ralph/config.toml` in place for `ralph tune --write`: the six `[scoring.weights]`
//! keys get new values and every other byte — comments, order, other tables — stays. Pure
//! text, so the file reads the same to the user afterwards.

use crate::market::{Dimension, Scores};

/// `text` with `[scoring.weights]` set to `weights`: each key's value replaced where it is
/// (its trailing comment kept), missing keys added at the end of the table, and the table
/// appended when the file has none.
pub fn set_weights(text: &str, weights: &Scores) -> String {
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let value = |d: Dimension| format!("{:.3}", weights.get(d));
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let header = lines
        .iter()
        .position(|l| table_name(l).as_deref() == Some("scoring.weights"));
    let Some(header) = header else {
        let mut out = text.to_owned();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(nl);
        }
        out.push_str(&format!("{nl}[scoring.weights]{nl}"));
        for d in Dimension::ALL {
            out.push_str(&format!("{} = {}{nl}", d.key(), value(d)));
        }
        return out;
    };
    let end = lines[header + 1..]
        .iter()
        .position(|l| table_name(l).is_some())
        .map_or(lines.len(), |i| header + 1 + i);
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let mut seen = Vec::new();
    for line in out.iter_mut().take(end).skip(header + 1) {
        let Some((key, rest)) = line.split_once('=') else {
            continue;
        };
        let Some(d) = Dimension::from_key(key.trim()) else {
            continue;
        };
        seen.push(d);
        // Keep what follows the value: a comment and the line end.
        let rest = rest.trim_start();
        let after = rest
            .find(|c: char| c.is_whitespace() || c == '#')
            .map_or("", |i| &rest[i..]);
        let after = if after.is_empty() { nl } else { after };
        *line = format!("{} = {}{after}", key.trim_end(), value(d));
    }
    // Missing keys go after the table's last key line.
    let last_key = (header + 1..end)
        .rev()
        .find(|&i| out[i].contains('='))
        .unwrap_or(header);
    let missing: String = Dimension::ALL
        .into_iter()
        .filter(|d| !seen.contains(d))
        .map(|d| format!("{} = {}{nl}", d.key(), value(d)))
        .collect();
    if !missing.is_empty() {
        if !out[last_key].ends_with('\n') {
            out[last_key].push_str(nl);
        }
        out.insert(last_key + 1, missing);
    }
    out.concat()
}

/// The table a line opens (`[name]`, comment allowed), if it is a table header.
fn table_name(line: &str) -> Option<String> {
    let t = line.trim();
    let t = t.split('#').next().unwrap_or("").trim();
    (t.starts_with('[') && t.ends_with(']') && !t.starts_with("[["))
        .then(|| t.trim_matches(['[', ']']).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights() -> Scores {
        Scores {
            spec_alignment: 0.4,
            technical_quality: 0.2,
            innovation: 0.05,
            risk: 0.2,
            efficiency: 0.1,
            specialist_validation: 0.05,
        }
    }

    #[test]
    fn values_are_replaced_in_place_keeping_comments_and_everything_else() {
        let text = "tracker = \"local\"\n\n[scoring.weights]             # must sum to 1.0\nspec_alignment = 0.30  # what the issue asks\ntechnical_quality = 0.20\ninnovation = 0.15\nrisk = 0.20\nefficiency = 0.10\nspecialist_validation = 0.05\n\n[defaults]\nbackend = \"claude\"\n";
        let out = set_weights(text, &weights());
        assert_eq!(
            out,
            "tracker = \"local\"\n\n[scoring.weights]             # must sum to 1.0\nspec_alignment = 0.400  # what the issue asks\ntechnical_quality = 0.200\ninnovation = 0.050\nrisk = 0.200\nefficiency = 0.100\nspecialist_validation = 0.050\n\n[defaults]\nbackend = \"claude\"\n"
        );
        let parsed: toml::Value = toml::from_str(&out).unwrap();
        assert_eq!(
            parsed["scoring"]["weights"]["spec_alignment"].as_float(),
            Some(0.4)
        );
        assert_eq!(parsed["defaults"]["backend"].as_str(), Some("claude"));
    }

    #[test]
    fn missing_keys_and_a_missing_table_are_added() {
        let text = "[scoring.weights]\r\nrisk = 0.5\r\n\r\n[limits]\r\n";
        let out = set_weights(text, &weights());
        assert!(
            out.starts_with("[scoring.weights]\r\nrisk = 0.200\r\nspec_alignment = 0.400\r\n"),
            "{out:?}"
        );
        assert!(
            out.ends_with("specialist_validation = 0.050\r\n\r\n[limits]\r\n"),
            "{out:?}"
        );
        let none = set_weights("tracker = \"local\"", &weights());
        let parsed: toml::Value = toml::from_str(&none).unwrap();
        assert_eq!(
            parsed["scoring"]["weights"]["innovation"].as_float(),
            Some(0.05)
        );
        assert_eq!(parsed["tracker"].as_str(), Some("local"));
    }
}
