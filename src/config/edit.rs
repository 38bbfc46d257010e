//! Editing `.ralph/config.toml` in place for `ralph tune --write`: the six `[scoring.weights]`
//! keys get new values and every other byte — comments, order, other tables, line ends —
//! stays, so the file reads the same to the user afterwards. Edited through `toml_edit`'s
//! document model (already in the tree under `toml`): a dotted key, an inline table or a
//! `[scoring.weights]` inside a multi-line string are what they are in TOML, not lines.

use crate::market::{Dimension, Scores};

/// `text` with `[scoring.weights]` set to `weights`: each key's value replaced where it is
/// (its trailing comment kept), missing keys added at the end of the table, and the table
/// added when the file has none. `Err` with the parser's message when `text` is not TOML.
pub fn set_weights(text: &str, weights: &Scores) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    let scoring = doc
        .entry("scoring")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_like_mut()
        .ok_or("`scoring` is not a table")?;
    let table = scoring
        .entry("weights")
        .or_insert(toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or("`scoring.weights` is not a table")?;
    for d in Dimension::ALL {
        let mut value: toml_edit::Value = format!("{:.3}", weights.get(d))
            .parse()
            .map_err(|e| format!("{e}"))?;
        if let Some(old) = table.get(d.key()).and_then(toml_edit::Item::as_value) {
            *value.decor_mut() = old.decor().clone();
        }
        table.insert(d.key(), toml_edit::Item::Value(value));
    }
    let out = doc.to_string();
    // New lines are written with `\n`; a file with `\r\n` line ends keeps them.
    Ok(if text.contains("\r\n") {
        out.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        out
    })
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
        let out = set_weights(text, &weights()).unwrap();
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
        let out = set_weights(text, &weights()).unwrap();
        assert!(
            out.starts_with("[scoring.weights]\r\nrisk = 0.200\r\nspec_alignment = 0.400\r\n"),
            "{out:?}"
        );
        assert!(
            out.ends_with("specialist_validation = 0.050\r\n\r\n[limits]\r\n"),
            "{out:?}"
        );
        let none = set_weights("tracker = \"local\"", &weights()).unwrap();
        let parsed: toml::Value = toml::from_str(&none).unwrap();
        assert_eq!(
            parsed["scoring"]["weights"]["innovation"].as_float(),
            Some(0.05)
        );
        assert_eq!(parsed["tracker"].as_str(), Some("local"));
    }

    #[test]
    fn what_toml_means_is_edited_not_what_a_line_looks_like() {
        // A dotted key, an inline table and a header-looking line inside a string.
        let dotted = "scoring.weights.risk = 0.5 # kept\nnote = \"\"\"\n[scoring.weights]\nrisk = 9\n\"\"\"\n";
        let out = set_weights(dotted, &weights()).unwrap();
        let parsed: toml::Value = toml::from_str(&out).unwrap();
        assert_eq!(parsed["scoring"]["weights"]["risk"].as_float(), Some(0.2));
        assert_eq!(
            parsed["scoring"]["weights"]["innovation"].as_float(),
            Some(0.05)
        );
        assert_eq!(
            parsed["note"].as_str(),
            Some("[scoring.weights]\nrisk = 9\n"),
            "the string is untouched"
        );
        assert!(out.contains("# kept"), "{out}");
        let inline = "scoring = { weights = { risk = 0.5 } }\n";
        let parsed: toml::Value =
            toml::from_str(&set_weights(inline, &weights()).unwrap()).unwrap();
        assert_eq!(
            parsed["scoring"]["weights"]["efficiency"].as_float(),
            Some(0.1)
        );
        assert!(set_weights("not = [toml", &weights()).is_err());
    }
}
