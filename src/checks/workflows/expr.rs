//! GitHub Actions expressions, evaluated as a runner evaluates them for the run ralph stands
//! for (a pull request from a branch of the same repository, on Linux): the `if:` of a job or a
//! step, and every `${{ … }}` a `run:` script or a `runs-on` holds. Literals (`null`, booleans,
//! numbers, `'strings'`), contexts (`matrix.*`, `env.*`, `inputs.*`, `runner.*`, the parts of
//! `github.*` such a run has), `!`, comparisons (loose: another type is turned into a number,
//! strings compared without case), `&&` and `||` (which give one of their operands), `contains`,
//! `startsWith`, `endsWith`, `format`, `join`, `fromJSON`, and the status functions
//! (`success()` and `always()` hold, `failure()` and `cancelled()` do not: a step runs here only
//! after the ones before it succeeded). What only a real run knows — `secrets.*`, `steps.*`,
//! `needs.*`, the event's payload beyond the pull request's origin, `hashFiles` — is unknown,
//! and an expression that depends on it cannot be decided: the caller names it, never guesses.

use std::collections::BTreeMap;

/// What an expression's names are looked up in.
pub struct Context<'a> {
    /// The matrix combination; `inputs.<name>` keys hold the inputs' defaults.
    pub matrix: &'a BTreeMap<String, String>,
    /// The workflow's, the job's and the step's variables.
    pub env: &'a BTreeMap<String, String>,
    /// `pull_request` or `push`: the event the run stands for.
    pub event: &'a str,
}

/// A value of an expression; `Unknown` when it depends on what only a workflow run knows (the
/// name of what it needs).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    Text(String),
    Array(Vec<Value>),
    Unknown(String),
}

impl Value {
    /// Its truth as a runner takes it; `None` when unknown.
    pub fn truth(&self) -> Option<bool> {
        Some(match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::Text(s) => !s.is_empty(),
            Value::Array(_) => true,
            Value::Unknown(_) => return None,
        })
    }

    /// The text a runner puts in for it in a script (`null` is empty, `3.0` is `3`); what it
    /// depends on, when unknown.
    pub fn text(&self) -> Result<String, String> {
        Ok(match self {
            Value::Null => String::new(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => number_text(*n),
            Value::Text(s) => s.clone(),
            Value::Array(_) => "Array".to_owned(),
            Value::Unknown(what) => return Err(what.clone()),
        })
    }

    fn number(&self) -> f64 {
        match self {
            Value::Null => 0.0,
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::Number(n) => *n,
            Value::Text(s) if s.trim().is_empty() => 0.0,
            Value::Text(s) => parse_number(s.trim()).unwrap_or(f64::NAN),
            Value::Array(_) | Value::Unknown(_) => f64::NAN,
        }
    }
}

fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

fn parse_number(s: &str) -> Option<f64> {
    if let Some(hex) = s.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok().map(|n| n as f64);
    }
    s.parse().ok()
}

/// Evaluates `text` (one expression, without `${{ }}`) in `cx`. `Err` when it cannot be read.
pub fn evaluate(text: &str, cx: &Context) -> Result<Value, String> {
    let tokens = tokens(text)?;
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
        cx,
    };
    let value = parser.or()?;
    match parser.tokens.get(parser.at) {
        None => Ok(value),
        Some(t) => Err(format!("unexpected `{}`", t.shown())),
    }
}

/// Whether an `if:` holds: `Ok(true)`/`Ok(false)`, or `Err` with what it depends on that only a
/// workflow run knows (or why it cannot be read). The condition may be wrapped in `${{ }}`.
pub fn condition(cond: &str, cx: &Context) -> Result<bool, String> {
    let trimmed = cond.trim();
    let inner = trimmed
        .strip_prefix("${{")
        .and_then(|s| s.strip_suffix("}}"))
        .unwrap_or(trimmed);
    if inner.contains("${{") {
        return Err(format!("`{trimmed}` mixes text and expressions"));
    }
    let value = evaluate(inner, cx).map_err(|e| format!("`{inner}` cannot be read: {e}"))?;
    value.truth().ok_or_else(|| match value {
        Value::Unknown(what) => what,
        _ => unreachable!("only an unknown value has no truth"),
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(f64),
    Text(String),
    Name(String),
    Op(&'static str),
}

impl Token {
    fn shown(&self) -> String {
        match self {
            Token::Number(n) => number_text(*n),
            Token::Text(s) => format!("'{s}'"),
            Token::Name(n) => n.clone(),
            Token::Op(o) => (*o).to_owned(),
        }
    }
}

const OPS: [&str; 14] = [
    "&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "(", ")", "[", "]", ",",
];

fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err("a string is not closed".into()),
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        s.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            out.push(Token::Text(s));
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            i += 1;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'))
            {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            out.push(Token::Number(
                parse_number(&s).ok_or_else(|| format!("`{s}` is not a number"))?,
            ));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*'))
            {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            out.push(Token::Name(name.trim_end_matches('.').to_owned()));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let op = OPS
                .iter()
                .find(|op| rest.starts_with(**op))
                .ok_or_else(|| format!("`{c}` is not part of an expression"))?;
            out.push(Token::Op(op));
            i += op.chars().count();
        }
    }
    Ok(out)
}

struct Parser<'a, 'c> {
    tokens: &'a [Token],
    at: usize,
    cx: &'a Context<'c>,
}

impl Parser<'_, '_> {
    fn peek_op(&self, op: &str) -> bool {
        matches!(self.tokens.get(self.at), Some(Token::Op(o)) if *o == op)
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.peek_op(op) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("`{op}` expected"))
        }
    }

    fn or(&mut self) -> Result<Value, String> {
        let mut left = self.and()?;
        while self.peek_op("||") {
            self.at += 1;
            let right = self.and()?;
            left = match left.truth() {
                Some(true) => left,
                Some(false) => right,
                // Either operand may be the value: its truth is known when the other's is true.
                None if right.truth() == Some(true) => right,
                None => left,
            };
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Value, String> {
        let mut left = self.equality()?;
        while self.peek_op("&&") {
            self.at += 1;
            let right = self.equality()?;
            left = match left.truth() {
                Some(false) => left,
                Some(true) => right,
                None if right.truth() == Some(false) => right,
                None => left,
            };
        }
        Ok(left)
    }

    fn equality(&mut self) -> Result<Value, String> {
        let mut left = self.comparison()?;
        while let Some(op) = ["==", "!="].into_iter().find(|op| self.peek_op(op)) {
            self.at += 1;
            let right = self.comparison()?;
            left = match known(&left, &right) {
                Some(unknown) => unknown,
                None => Value::Bool(loose_eq(&left, &right) == (op == "==")),
            };
        }
        Ok(left)
    }

    fn comparison(&mut self) -> Result<Value, String> {
        let mut left = self.unary()?;
        while let Some(op) = ["<=", ">=", "<", ">"]
            .into_iter()
            .find(|op| self.peek_op(op))
        {
            self.at += 1;
            let right = self.unary()?;
            left = match known(&left, &right) {
                Some(unknown) => unknown,
                None => Value::Bool(compare(&left, &right, op)),
            };
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Value, String> {
        if self.peek_op("!") {
            self.at += 1;
            let v = self.unary()?;
            return Ok(match v.truth() {
                Some(t) => Value::Bool(!t),
                None => v,
            });
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Value, String> {
        let mut value = self.primary()?;
        // `matrix['python-version']`, `fromJSON('…')[0]`.
        while self.peek_op("[") {
            self.at += 1;
            let index = self.or()?;
            self.expect("]")?;
            value = match (&value, &index) {
                (Value::Unknown(_), _) => value,
                (_, Value::Unknown(_)) => index,
                (Value::Array(items), i) => {
                    let n = i.number();
                    if n >= 0.0 && n.fract() == 0.0 {
                        items.get(n as usize).cloned().unwrap_or(Value::Null)
                    } else {
                        Value::Null
                    }
                }
                _ => Value::Null,
            };
        }
        Ok(value)
    }

    fn primary(&mut self) -> Result<Value, String> {
        let token = self
            .tokens
            .get(self.at)
            .cloned()
            .ok_or("the expression ends too soon")?;
        self.at += 1;
        match token {
            Token::Number(n) => Ok(Value::Number(n)),
            Token::Text(s) => Ok(Value::Text(s)),
            Token::Op("(") => {
                let v = self.or()?;
                self.expect(")")?;
                Ok(v)
            }
            Token::Op(o) => Err(format!("unexpected `{o}`")),
            Token::Name(name) if self.peek_op("(") => {
                self.at += 1;
                let mut args = Vec::new();
                if !self.peek_op(")") {
                    loop {
                        args.push(self.or()?);
                        if self.peek_op(",") {
                            self.at += 1;
                        } else {
                            break;
                        }
                    }
                }
                self.expect(")")?;
                call(&name, args)
            }
            Token::Name(name) => {
                // `matrix['key']` names the context alone; its key is the index after it.
                if self.peek_op("[") && matches!(name.as_str(), "matrix" | "env" | "inputs") {
                    self.at += 1;
                    let key = self.or()?;
                    self.expect("]")?;
                    return Ok(match key.text() {
                        Ok(k) => lookup(&format!("{name}.{k}"), self.cx),
                        Err(_) => key,
                    });
                }
                Ok(lookup(&name, self.cx))
            }
        }
    }
}

/// The unknown one of two operands, if either is.
fn known(a: &Value, b: &Value) -> Option<Value> {
    [a, b]
        .into_iter()
        .find(|v| matches!(v, Value::Unknown(_)))
        .cloned()
}

/// A runner's `==`: the same type compared as it is (strings without case), another turned into
/// numbers.
fn loose_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Text(x), Value::Text(y)) => x.to_lowercase() == y.to_lowercase(),
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Array(_), _) | (_, Value::Array(_)) => false,
        _ => a.number() == b.number(),
    }
}

fn compare(a: &Value, b: &Value, op: &str) -> bool {
    let ordering = match (a, b) {
        (Value::Text(x), Value::Text(y)) => x.to_lowercase().partial_cmp(&y.to_lowercase()),
        _ => a.number().partial_cmp(&b.number()),
    };
    let Some(o) = ordering else { return false };
    match op {
        "<" => o.is_lt(),
        "<=" => o.is_le(),
        ">" => o.is_gt(),
        _ => o.is_ge(),
    }
}

/// A name's value for the run ralph stands for.
fn lookup(name: &str, cx: &Context) -> Value {
    if let Some(key) = name.strip_prefix("matrix.") {
        // A key this combination lacks is null.
        return cx
            .matrix
            .get(key)
            .map_or(Value::Null, |v| Value::Text(v.clone()));
    }
    if name.starts_with("inputs.") {
        return cx
            .matrix
            .get(name)
            .map_or(Value::Null, |v| Value::Text(v.clone()));
    }
    if let Some(key) = name.strip_prefix("env.") {
        return cx
            .env
            .get(key)
            .map_or(Value::Null, |v| Value::Text(v.clone()));
    }
    let text = |s: &str| Value::Text(s.to_owned());
    match name {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        "runner.os" => text("Linux"),
        "runner.arch" => text("X64"),
        "runner.temp" => text("$RUNNER_TEMP"),
        "github.workspace" => text("$GITHUB_WORKSPACE"),
        "github.event_name" => text(cx.event),
        "github.ref_type" => text("branch"),
        // The change is a branch of this repository: a pull request from it is no fork's.
        "github.event.pull_request.head.repo.fork" => match cx.event {
            "pull_request" => Value::Bool(false),
            _ => Value::Null,
        },
        "github.event.pull_request.head.repo.full_name" | "github.repository"
            if cx.event == "pull_request" =>
        {
            text("this/repository")
        }
        _ if name.starts_with("secrets.") => Value::Unknown("a secret".into()),
        _ => Value::Unknown(format!("`{name}`, which only a workflow run has")),
    }
}

fn call(name: &str, args: Vec<Value>) -> Result<Value, String> {
    let lower = name.to_lowercase();
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("`{name}` takes {n} argument(s)"))
        }
    };
    if let Some(u) = args.iter().find(|a| matches!(a, Value::Unknown(_))) {
        if !matches!(
            lower.as_str(),
            "success" | "always" | "failure" | "cancelled"
        ) {
            return Ok(u.clone());
        }
    }
    let text_of = |v: &Value| v.text().unwrap_or_default().to_lowercase();
    Ok(match lower.as_str() {
        "success" | "always" => Value::Bool(true),
        "failure" | "cancelled" => Value::Bool(false),
        "contains" => {
            arity(2)?;
            match &args[0] {
                Value::Array(items) => Value::Bool(items.iter().any(|i| loose_eq(i, &args[1]))),
                hay => Value::Bool(text_of(hay).contains(&text_of(&args[1]))),
            }
        }
        "startswith" => {
            arity(2)?;
            Value::Bool(text_of(&args[0]).starts_with(&text_of(&args[1])))
        }
        "endswith" => {
            arity(2)?;
            Value::Bool(text_of(&args[0]).ends_with(&text_of(&args[1])))
        }
        "format" => {
            let Some((pattern, rest)) = args.split_first() else {
                return Err("`format` needs a pattern".into());
            };
            let mut out = pattern.text().unwrap_or_default();
            for (i, a) in rest.iter().enumerate() {
                out = out.replace(&format!("{{{i}}}"), &a.text().unwrap_or_default());
            }
            Value::Text(out.replace("{{", "{").replace("}}", "}"))
        }
        "join" => {
            let sep = args
                .get(1)
                .map_or(",".to_owned(), |s| s.text().unwrap_or_default());
            match args.first() {
                Some(Value::Array(items)) => Value::Text(
                    items
                        .iter()
                        .map(|i| i.text().unwrap_or_default())
                        .collect::<Vec<_>>()
                        .join(&sep),
                ),
                Some(v) => Value::Text(v.text().unwrap_or_default()),
                None => return Err("`join` needs an array".into()),
            }
        }
        "fromjson" => {
            arity(1)?;
            from_json(&args[0].text().unwrap_or_default())
        }
        _ => Value::Unknown(format!("`{name}()`, which only a workflow run can compute")),
    })
}

fn from_json(text: &str) -> Value {
    fn convert(v: serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
            serde_json::Value::String(s) => Value::Text(s),
            serde_json::Value::Array(a) => Value::Array(a.into_iter().map(convert).collect()),
            serde_json::Value::Object(_) => {
                Value::Unknown("an object from `fromJSON`, which ralph does not read".into())
            }
        }
    }
    match serde_json::from_str(text) {
        Ok(v) => convert(v),
        Err(_) => Value::Unknown(format!("`fromJSON('{text}')`, which is not JSON")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(cond: &str, matrix: &[(&str, &str)]) -> Result<bool, String> {
        let matrix: BTreeMap<String, String> = matrix
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let env: BTreeMap<String, String> = [("MODE".to_owned(), "full".to_owned())].into();
        condition(
            cond,
            &Context {
                matrix: &matrix,
                env: &env,
                event: "pull_request",
            },
        )
    }

    #[test]
    fn conditions_are_decided_as_a_runner_decides_them() {
        let free = [("py", "3.13t"), ("os", "ubuntu-latest")];
        let plain = [("py", "3.12"), ("os", "ubuntu-latest")];
        assert_eq!(holds("contains(matrix.py, 't')", &free), Ok(true));
        assert_eq!(holds("${{ contains(matrix.py, 't') }}", &plain), Ok(false));
        assert_eq!(holds("!contains(matrix.py, 't')", &plain), Ok(true));
        assert_eq!(
            holds("startsWith(matrix.os, 'Ubuntu')", &plain),
            Ok(true),
            "no case"
        );
        assert_eq!(holds("endsWith(matrix.os, '-latest')", &plain), Ok(true));
        assert_eq!(holds("runner.os == 'linux'", &[]), Ok(true));
        assert_eq!(
            holds("runner.os != 'Linux' || matrix.py == '3.12'", &plain),
            Ok(true)
        );
        assert_eq!(
            holds("runner.os == 'Windows' && matrix.py == '3.12'", &plain),
            Ok(false)
        );
        assert_eq!(
            holds("matrix.bench != ''", &plain),
            Ok(false),
            "a missing key is null"
        );
        assert_eq!(holds("matrix.py >= 3.10", &[("py", "3.12")]), Ok(true));
        assert_eq!(
            holds("matrix.py < '3.10'", &[("py", "3.9")]),
            Ok(false),
            "text by text"
        );
        assert_eq!(
            holds("(matrix.py == '3.12') && !(env.MODE == 'quick')", &plain),
            Ok(true)
        );
        assert_eq!(
            holds("success() && always() && !failure() && !cancelled()", &[]),
            Ok(true)
        );
        assert_eq!(holds("failure()", &[]), Ok(false));
        assert_eq!(holds("github.event_name == 'push'", &[]), Ok(false));
        assert_eq!(
            holds(
                "contains(fromJSON('[\"3.12\", \"3.13\"]'), matrix.py)",
                &plain
            ),
            Ok(true)
        );
        assert_eq!(holds("matrix['py'] == '3.12'", &plain), Ok(true));
        assert_eq!(
            holds("format('{0}-{1}', matrix.py, 'x') == '3.12-x'", &plain),
            Ok(true)
        );
        assert_eq!(
            holds("1 == '1' && true == 1 && null == 0", &[]),
            Ok(true),
            "loose"
        );
    }

    #[test]
    fn what_only_a_run_knows_is_named_unless_the_rest_decides() {
        let why = holds("steps.cache.outputs.cache-hit != 'true'", &[]).unwrap_err();
        assert!(why.contains("steps.cache.outputs.cache-hit"), "{why}");
        assert_eq!(holds("secrets.TOKEN != ''", &[]).unwrap_err(), "a secret");
        assert!(holds("needs.build.result == 'success'", &[]).is_err());
        // The other side of `||` or `&&` decides.
        assert_eq!(
            holds("runner.os == 'Linux' || steps.x.outputs.y", &[]),
            Ok(true)
        );
        assert_eq!(
            holds("steps.x.outputs.y && runner.os == 'macOS'", &[]),
            Ok(false)
        );
        assert!(holds("hashFiles('**/go.sum') != ''", &[]).is_err());
        // The duplicate-run idiom: a pull request from the same repository runs on push only.
        assert_eq!(
            holds(
                "github.event_name == 'push' || github.event.pull_request.head.repo.full_name != github.repository",
                &[]
            ),
            Ok(false)
        );
        assert_eq!(
            holds("!github.event.pull_request.head.repo.fork", &[]),
            Ok(true)
        );
    }

    #[test]
    fn unreadable_expressions_say_why() {
        assert!(holds("matrix.py == ", &[])
            .unwrap_err()
            .contains("cannot be read"));
        assert!(holds("'open", &[]).is_err());
        assert!(holds("a ; b", &[]).is_err());
        assert!(holds("${{ a }} && ${{ b }}", &[])
            .unwrap_err()
            .contains("mixes"));
    }

    #[test]
    fn values_are_put_in_scripts_as_a_runner_puts_them() {
        let matrix: BTreeMap<String, String> = [("n".to_owned(), "2".to_owned())].into();
        let env = BTreeMap::new();
        let cx = Context {
            matrix: &matrix,
            env: &env,
            event: "push",
        };
        let text = |e: &str| evaluate(e, &cx).unwrap().text();
        assert_eq!(text("matrix.n == '2' && 'yes' || 'no'"), Ok("yes".into()));
        assert_eq!(text("matrix.missing"), Ok(String::new()));
        assert_eq!(text("3"), Ok("3".into()));
        assert_eq!(text("join(fromJSON('[1, 2]'), '+')"), Ok("1+2".into()));
        assert_eq!(text("github.event_name"), Ok("push".into()));
        assert!(text("github.sha").is_err());
    }
}
