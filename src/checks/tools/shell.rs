//! Reading a command as the shell would run it: its simple commands (split at unquoted `;`,
//! `&&`, `||`, `|`, `&`, line ends and groupings), each with its `VAR=value` assignments and
//! generic wrappers (`env`, `sudo`, `time`, `timeout`, …) taken off and `sh -c '…'` looked into —
//! what every tool's reading starts from, before any tool is asked.

/// How deep wrappers are followed (`make test` → `npm test` → `jest`): a script that calls
/// itself ends here.
pub(super) const MAX_DEPTH: usize = 8;

/// One simple command: the program as written, its arguments, and the assignments before it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Call {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl Call {
    /// A call of `words` (its first word the program).
    pub fn of(words: &[&str]) -> Call {
        Call {
            program: words.first().copied().unwrap_or_default().to_owned(),
            args: words.iter().skip(1).map(|w| (*w).to_owned()).collect(),
            env: Vec::new(),
        }
    }

    /// The program's file name (`python3.11` for `/usr/bin/python3.11`).
    pub fn name(&self) -> &str {
        self.program.rsplit('/').next().unwrap_or(&self.program)
    }

    /// The first argument that is not a flag: a subcommand.
    pub fn sub(&self) -> &str {
        self.args
            .iter()
            .find(|a| !a.starts_with('-'))
            .map_or("", String::as_str)
    }

    /// Whether an argument is `flag`.
    pub fn has(&self, flag: &str) -> bool {
        self.args.iter().any(|a| a == flag)
    }

    /// The arguments after the first `word`, its own flags skipped — those in `valued` with the
    /// value after them (`uv run --with x pytest` starts `pytest`).
    pub fn after_valued(&self, word: &str, valued: &[&str]) -> Option<Vec<String>> {
        let at = self.args.iter().position(|a| a == word)?;
        let rest = self
            .args
            .get(past_flags(&self.args, at + 1, valued)..)?
            .to_vec();
        (!rest.is_empty()).then_some(rest)
    }

    /// The arguments after the first `word`, its own flags skipped (`run` in `uv run --frozen
    /// pytest`); `None` without it or with nothing after.
    pub fn after(&self, word: &str) -> Option<Vec<String>> {
        let at = self.args.iter().position(|a| a == word)?;
        let rest: Vec<String> = self.args[at + 1..]
            .iter()
            .skip_while(|a| a.starts_with('-'))
            .cloned()
            .collect();
        (!rest.is_empty()).then_some(rest)
    }
}

/// The simple commands of `script`, each as its words (quotes kept together and taken off).
pub fn simple_commands(script: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current = String::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let flush = |current: &mut String, out: &mut Vec<Vec<String>>| {
        let piece = current.trim();
        if !piece.is_empty() {
            let words = shell_words::split(piece)
                .unwrap_or_else(|_| piece.split_whitespace().map(str::to_owned).collect());
            if !words.is_empty() {
                out.push(words);
            }
        }
        current.clear();
    };
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            escaped = false;
            if c != '\n' {
                current.push('\\');
                current.push(c);
            }
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => {
                single = !single;
                current.push(c);
            }
            '"' if !single => {
                double = !double;
                current.push(c);
            }
            // `2>&1`, `<&3`, `&>log` redirect: they end no command.
            '&' if !single
                && !double
                && (current.ends_with(['>', '<']) || chars.peek() == Some(&'>')) =>
            {
                current.push(c)
            }
            '\n' | ';' | '&' | '|' | '(' | ')' | '{' | '}' if !single && !double => {
                flush(&mut current, &mut out)
            }
            _ => current.push(c),
        }
    }
    flush(&mut current, &mut out);
    out
}

/// The index of the first word of `words` from `from` that is no option: options skipped, those
/// in `valued` with the value after them.
pub(super) fn past_flags(words: &[String], from: usize, valued: &[&str]) -> usize {
    let mut i = from;
    while let Some(w) = words.get(i) {
        if valued.contains(&w.as_str()) {
            i += 2;
        } else if w.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// Programs that start the command after their own options, as it is.
fn generic_wrapper(words: &[String]) -> Option<usize> {
    let name = words.first()?.rsplit('/').next()?;
    let skip_flags = |from: usize, with_value: &[&str]| past_flags(words, from, with_value);
    match name {
        "sudo" => Some(skip_flags(1, &["-u", "-g", "-C"])),
        "env" => Some(skip_flags(1, &["-u", "-C", "-S"])),
        "time" | "exec" | "nohup" | "command" | "stdbuf" | "cross-env" => Some(skip_flags(1, &[])),
        "nice" => Some(skip_flags(1, &["-n"])),
        "xvfb-run" => Some(skip_flags(1, &["-s", "-n", "-f", "-e", "-p", "-w"])),
        "timeout" => Some(skip_flags(1, &["-s", "-k"]) + 1),
        _ => None,
    }
}

/// What a command's words come to once assignments and generic wrappers are taken off: a call,
/// or the script a shell was given.
pub(super) enum Peeled {
    Call(Call),
    Script(String),
    Nothing,
}

pub(super) fn peel(words: &[String]) -> Peeled {
    let mut env = Vec::new();
    let mut i = 0;
    loop {
        while let Some((k, v)) = words
            .get(i)
            .and_then(|w| w.split_once('='))
            .filter(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_'))
        {
            env.push((k.to_owned(), v.to_owned()));
            i += 1;
        }
        match words.get(i..).and_then(generic_wrapper) {
            Some(n) if n > 0 => i += n,
            _ => break,
        }
    }
    let Some(program) = words.get(i) else {
        return Peeled::Nothing;
    };
    let args = &words[i + 1..];
    let name = program.rsplit('/').next().unwrap_or(program);
    if matches!(name, "sh" | "bash" | "dash" | "zsh" | "ash") {
        let at = args
            .iter()
            .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'));
        if let Some(script) = at.and_then(|at| args.get(at + 1)) {
            return Peeled::Script(script.clone());
        }
    }
    Peeled::Call(Call {
        program: program.clone(),
        args: args.to_vec(),
        env,
    })
}

/// The simple commands `script` runs as the shell would run them: each with its assignments and
/// generic wrappers taken off, and the scripts given to `sh -c`/`bash -ec` read in their place
/// (`env X=1 bash -ec 'npm ci && npm test'` is `npm ci`, `npm test`).
pub fn plain_commands(script: &str) -> Vec<Vec<String>> {
    fn go(script: &str, depth: usize, out: &mut Vec<Vec<String>>) {
        for words in simple_commands(script) {
            match peel(&words) {
                Peeled::Script(inner) if depth < MAX_DEPTH => go(&inner, depth + 1, out),
                Peeled::Call(call) => {
                    out.push(std::iter::once(call.program).chain(call.args).collect())
                }
                Peeled::Script(_) | Peeled::Nothing => {}
            }
        }
    }
    let mut out = Vec::new();
    go(script, 0, &mut out);
    out
}

/// The program a shell could not find, from its line (`sh: 1: ruff: not found`, `bash: eslint:
/// command not found`).
pub fn shell_missing(line: &str) -> Option<String> {
    let rest = line
        .strip_suffix(": command not found")
        .or_else(|| line.strip_suffix(": not found"))?;
    let shell = ["sh:", "bash:", "zsh:", "/bin/sh:", "dash:"]
        .iter()
        .any(|s| line.starts_with(s));
    // A script the shell runs: `typecheck.sh: 3: mypy: not found`.
    let parts: Vec<&str> = rest.split(": ").collect();
    let script = parts.len() == 3 && parts[1].chars().all(|c| c.is_ascii_digit());
    (shell || script)
        .then(|| rest.rsplit(": ").next().map(unquote))
        .flatten()
}

/// A word without the quotes a message put around it.
pub(crate) fn unquote(s: &str) -> String {
    s.trim()
        .trim_matches(|c| c == '`' || c == '\'' || c == '"')
        .to_owned()
}

/// Whether `word` is an identifier of letters, digits and `_`.
pub(crate) fn word(w: &str) -> bool {
    !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Whether `command` is one program's run with nothing a shell would read specially: safe to
/// add words to its end.
pub(crate) fn plain(command: &str) -> bool {
    !command.contains(['&', ';', '|', '`', '$', '\n', '>', '<', '\'', '"', '(', ')'])
}
