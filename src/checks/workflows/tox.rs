//! `tox` (and `nox`) as a CI step runs the whole env list — nine interpreters in a matrix the
//! runner has, one here. A CI check that runs `tox` without `-e` runs instead the envs this
//! machine can run: the one of the interpreter present (`py311` for Python 3.11, or a bare
//! `py`), and says which it left out.

/// The env list of the project's tox configuration (`tox.ini`, `setup.cfg`'s `[tox:tox]`, or
/// `pyproject.toml`'s legacy ini), generative braces expanded (`py3{9,10}` → `py39`, `py310`).
pub fn env_list(p: &crate::checks::project::Project) -> Vec<String> {
    let sources = [
        ("tox.ini", "[tox]"),
        ("setup.cfg", "[tox:tox]"),
        ("pyproject.toml", "[tox]"),
    ];
    for (file, section) in sources {
        let Some(text) = p.text(file) else {
            continue;
        };
        if let Some(list) = env_list_in(&text, section) {
            return list;
        }
    }
    Vec::new()
}

/// The `envlist`/`env_list` of `section` in an ini `text` (values may continue on indented
/// lines), expanded.
fn env_list_in(text: &str, section: &str) -> Option<Vec<String>> {
    let mut inside = false;
    let mut value: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            if value.is_some() {
                break;
            }
            inside = t == section;
            continue;
        }
        if !inside {
            continue;
        }
        match &mut value {
            Some(v) if line.starts_with([' ', '\t']) && !t.is_empty() => {
                v.push(',');
                v.push_str(t);
            }
            Some(_) => break,
            None => {
                if let Some((k, v)) = t.split_once('=') {
                    if matches!(k.trim(), "envlist" | "env_list") {
                        value = Some(v.trim().to_owned());
                    }
                }
            }
        }
    }
    let value = value?;
    let mut out = Vec::new();
    for item in split_top(&value) {
        out.extend(expand(item.trim()));
    }
    out.retain(|e| !e.is_empty());
    Some(out)
}

/// `text` split at commas outside braces.
fn split_top(text: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// A generative env name expanded: `py3{9,10}-django{4,5}` → every combination.
fn expand(name: &str) -> Vec<String> {
    let Some(open) = name.find('{') else {
        return vec![name.to_owned()];
    };
    let Some(close) = name[open..].find('}').map(|c| open + c) else {
        return vec![name.to_owned()];
    };
    let (head, tail) = (&name[..open], &name[close + 1..]);
    name[open + 1..close]
        .split(',')
        .flat_map(|alt| expand(&format!("{head}{}{tail}", alt.trim())))
        .collect()
}

/// The envs of `list` this machine runs with Python `major.minor`: those whose interpreter
/// factor (`py311`, `py3.11`, `py`) it is; and those left out. None when nothing matches.
pub fn choose(list: &[String], (major, minor): (u32, u32)) -> Option<(Vec<String>, Vec<String>)> {
    let mine = [format!("py{major}{minor}"), format!("py{major}.{minor}")];
    let runs = |env: &str| {
        env.split('-')
            .any(|f| mine.iter().any(|m| m == f) || f == "py" || f == format!("py{major}"))
    };
    let (take, leave): (Vec<String>, Vec<String>) = list.iter().cloned().partition(|e| runs(e));
    (!take.is_empty()).then_some((take, leave))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_env_list_is_read_and_expanded() {
        let ini = "[tox]\nenvlist = check-manifest,docs,flake8,py3{9,10,11,12},pypy3\n\n[testenv]\ndeps = pytest\n";
        assert_eq!(
            env_list_in(ini, "[tox]").unwrap(),
            [
                "check-manifest",
                "docs",
                "flake8",
                "py39",
                "py310",
                "py311",
                "py312",
                "pypy3"
            ]
        );
        let multi = "[tox]\nenv_list =\n    py311\n    lint\nskip_missing_interpreters = true\n";
        assert_eq!(env_list_in(multi, "[tox]").unwrap(), ["py311", "lint"]);
        assert!(env_list_in("[testenv]\nx=1\n", "[tox]").is_none());
    }

    #[test]
    fn the_env_of_the_interpreter_present_is_chosen() {
        let list: Vec<String> = ["docs", "py39", "py311", "py311-django5", "pypy3"]
            .map(String::from)
            .to_vec();
        let (take, leave) = choose(&list, (3, 11)).unwrap();
        assert_eq!(take, ["py311", "py311-django5"]);
        assert_eq!(leave, ["docs", "py39", "pypy3"]);
        assert!(choose(&["py39".to_owned()], (3, 11)).is_none());
        assert_eq!(choose(&["py".to_owned()], (3, 11)).unwrap().0, ["py"]);
    }
}
