//! Tests of configuration parsing, defaults, inheritance and every validation rule.

use super::*;
use crate::market::tables;
use std::fs;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::from_toml(Path::new("/repo/.ralph/config.toml"), text)
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn the_init_template_is_exactly_the_defaults() {
    // The template names a model for the default claude backend (a CLI left to itself picks
    // its most expensive one); everything else is exactly the defaults.
    let mut from_template = parse(DEFAULT_TOML).unwrap();
    assert_eq!(from_template.defaults.model.as_deref(), Some("sonnet"));
    for a in std::iter::once(&mut from_template.defaults)
        .chain(std::iter::once(&mut from_template.arbiter))
        .chain(std::iter::once(&mut from_template.implementer))
        .chain(from_template.bots.iter_mut().map(|b| &mut b.agent))
    {
        assert_eq!(a.model.as_deref(), Some("sonnet"), "inherited");
        a.model = None;
    }
    assert_eq!(from_template, Config::default());
    let c = Config::default();
    assert_eq!(c.tracker, TrackerKind::Github);
    assert_eq!(c.max_iterations, 15);
    assert_eq!(c.bot_ids(), ["smart_bot_1", "smart_bot_2", "smart_bot_3"]);
    assert_eq!(c.budget_pool(), 30);
    assert_eq!(c.marketplace.weight_min, 0.05);
    assert_eq!(c.marketplace.weight_max, 0.60);
    assert_eq!(c.scoring_weights, tables().default_weights);
    assert_eq!(c.defaults.backend, BackendKind::Claude);
    assert_eq!(c.defaults.timeout_secs, 900);
    assert_eq!(c.github.ready_label, "ready");
}

#[test]
fn cli_agents_take_a_program_arguments_and_a_price() {
    let c = parse(
        r#"
[defaults]
backend = "codex"
command = ["npx", "-y", "@openai/codex"]
args = ["-c", "model_provider=\"mine\""]
price = { input_per_mtok = 1.25, output_per_mtok = 10.0, cached_input_per_mtok = 0.125 }
[[bots]]
id = "own"
command = ["/opt/codex"]
[[bots]]
id = "claude_1"
backend = "claude"
"#,
    )
    .unwrap();
    let own = &c.bots[0].agent;
    assert_eq!(own.command, ["/opt/codex"]);
    assert_eq!(own.args, ["-c", "model_provider=\"mine\""], "inherited");
    let price = own.price.unwrap();
    // 600k fresh at 1.25, 400k cached at 0.125, 100k out at 10.
    assert!((price.cost(1_000_000, 400_000, 100_000) - (0.75 + 0.05 + 1.0)).abs() < 1e-9);
    let claude = &c.bots[1].agent;
    assert!(
        claude.command.is_empty() && claude.args.is_empty() && claude.price.is_none(),
        "another backend inherits none of them"
    );
}

#[test]
fn every_documented_key_is_accepted() {
    let c = parse(
        r#"
tracker = "local"
max_iterations = 4
[marketplace]
base_budget_per_bot = 5
weight_min = 0.1
weight_max = 0.5
concurrency = 2
audit_rate = 0.2
[scoring.weights]
spec_alignment = 0.25
technical_quality = 0.25
innovation = 0.10
risk = 0.20
efficiency = 0.15
specialist_validation = 0.05
[defaults]
backend = "codex"
model = "gpt-5-codex"
timeout_secs = 300
[[bots]]
id = "claude_1"
backend = "claude"
model = "claude-sonnet-4-5"
[[bots]]
id = "script"
backend = "command"
command = ["./bot.sh", "--fast"]
[[bots]]
id = "local-llama"
backend = "openai"
base_url = "http://localhost:11434/v1"
model = "llama3.1"
api_key_env = "OLLAMA_KEY"
max_tokens = 4000
temperature = 0.0
[[bots]]
id = "codex"
[[bots]]
id = "recorded"
backend = "replay"
dir = "fixtures/replay"
[arbiter]
order_swaps = 0
backend = "anthropic"
base_url = "https://api.example.test"
model = "claude-opus-4-1"
judges = [{ model = "claude-sonnet-4-5" }, { backend = "openai", model = "gpt-4.1", temperature = 0.0 }]
[implementer]
timeout_secs = 1800
[checks]
timeout_secs = 600
setup = "npm ci"
format = "cargo fmt --all -- --check"
test = "cargo test"
[checks.coverage]
command = "cargo llvm-cov --summary-only --json"
[github]
ready_label = "ralph-ready"
[limits]
max_cost_usd = 2.5
max_tokens = 100000
[git]
author = "Ralph Bot <bot@example.com>"
base = "develop"
remote = "upstream"
"#,
    )
    .unwrap();
    assert_eq!(c.tracker, TrackerKind::Local);
    assert_eq!(c.marketplace.num_bots, 5);
    assert_eq!(c.budget_pool(), 25);
    assert_eq!(c.bots[1].agent.command, ["./bot.sh", "--fast"]);
    // Another backend than [defaults]: only neutral keys inherited.
    assert_eq!(c.bots[0].agent.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(c.bots[0].agent.timeout_secs, 300);
    // No backend named: everything from [defaults].
    assert_eq!(c.bots[3].agent.backend, BackendKind::Codex);
    assert_eq!(c.bots[3].agent.model.as_deref(), Some("gpt-5-codex"));
    assert_eq!(
        c.bots[4].agent.dir.as_deref(),
        Some(Path::new("fixtures/replay"))
    );
    assert_eq!(c.implementer.backend, BackendKind::Codex);
    assert_eq!(c.implementer.timeout_secs, 1800);
    assert_eq!(c.arbiter.model.as_deref(), Some("claude-opus-4-1"));
    assert_eq!(c.checks.commands["test"], "cargo test");
    assert_eq!(
        c.checks.coverage_command.as_deref(),
        Some("cargo llvm-cov --summary-only --json")
    );
    assert_eq!(c.github.ready_label, "ralph-ready");
    assert_eq!(c.marketplace.concurrency, 2);
    assert_eq!((c.marketplace.audit_rate, c.order_swaps), (0.2, 0));
    assert_eq!(c.checks.timeout_secs, 600);
    assert_eq!(
        c.checks.commands.len(),
        2,
        "timeout_secs and setup are not checks"
    );
    assert_eq!(c.checks.setup.as_deref(), Some("npm ci"));
    assert_eq!(
        (c.git.author_name.as_str(), c.git.author_email.as_str()),
        ("Ralph Bot", "bot@example.com")
    );
    assert_eq!(c.git.base.as_deref(), Some("develop"));
    assert_eq!(c.git.remote, "upstream");
    assert_eq!(c.limits.max_cost_usd, Some(2.5));
    assert_eq!(c.limits.max_tokens, Some(100_000));
    // Judges inherit from [arbiter]: the first keeps its backend and base_url.
    assert_eq!(c.judges.len(), 2);
    assert_eq!(c.judges[0].backend, BackendKind::Anthropic);
    assert_eq!(
        c.judges[0].base_url.as_deref(),
        Some("https://api.example.test")
    );
    assert_eq!(c.judges[0].model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(c.judges[1].backend, BackendKind::Openai);
    assert_eq!(c.judges[1].base_url, None);
    assert_eq!(c.judges[1].temperature, Some(0.0));
}

#[test]
fn run_limits_and_judges_are_checked() {
    let c = Config::default();
    assert_eq!(c.marketplace.concurrency, 8);
    assert_eq!(c.limits, LimitsConfig::default());
    assert!(c.judges.is_empty());
    for (text, expected) in [
        ("[limits]\nmax_cost_usd = 0", "positive number"),
        ("[limits]\nmax_cost_usd = -1.0", "positive number"),
        ("[limits]\nmax_tokens = 0", "at least 1"),
        ("[limits]\nmax_token = 5", "max_token"),
        ("[marketplace]\nconcurrency = 0", "allowed 1 to 64"),
        ("[checks]\ntimeout_secs = 0", "allowed 1 to 86400"),
        ("[git]\nauthor = \"ralph\"", "Name <email>"),
        ("[git]\nauthor = \"<a@b>\"", "Name <email>"),
        ("[git]\nbase = \"-x\"", "not a branch name"),
        ("[git]\nbase = \"a..b\"", "not a branch name"),
        ("[git]\nremote = \"a b\"", "not a remote name"),
        ("[defaults]\njudges = []", "only allowed in [arbiter]"),
        ("[implementer]\njudges = []", "only allowed in [arbiter]"),
        (
            "[[bots]]\nid = \"a\"\njudges = []",
            "only allowed in [arbiter]",
        ),
        ("[arbiter]\njudges = [{ judges = [] }]", "cannot be nested"),
        (
            "[arbiter]\njudges = [{ backend = \"command\" }]",
            "arbiter.judges[0].command",
        ),
    ] {
        let e = err(text);
        assert!(e.contains(expected), "{text}: {e}");
    }
}

#[test]
fn seats_seed_and_the_cost_per_issue_are_checked() {
    let c = Config::default();
    assert_eq!(
        (
            c.marketplace.seats,
            c.marketplace.seed,
            c.marketplace.max_cost_per_issue
        ),
        (None, None, None)
    );
    assert_eq!(c.fold_params().seats, None);
    let c = Config::from_toml(
        Path::new("config.toml"),
        "[marketplace]\nnum_bots = 5\nseats = 2\nseed = 7\nmax_cost_per_issue = 1.5\nvalue_per_merge = 40.0\n",
    )
    .unwrap();
    assert_eq!(c.marketplace.seats, Some(2));
    assert_eq!(c.marketplace.value_per_merge, Some(40.0));
    assert_eq!(c.marketplace.seed, Some(7));
    assert_eq!(c.marketplace.max_cost_per_issue, Some(1.5));
    assert_eq!(c.fold_params().seats, Some(2));
    for (text, expected) in [
        (
            "[marketplace]\nseats = 0",
            "allowed 1 to the 3 configured bot(s)",
        ),
        (
            "[marketplace]\nseats = 4",
            "allowed 1 to the 3 configured bot(s)",
        ),
        ("[marketplace]\nseed = -1", "allowed 0 to"),
        (
            "[marketplace]\nmax_cost_per_issue = 0",
            "positive number of US dollars",
        ),
        (
            "[marketplace]\nvalue_per_merge = -1",
            "`marketplace.value_per_merge` = -1 is out of range: allowed a positive number of US dollars",
        ),
        ("[marketplace]\nseat = 2", "seat"),
    ] {
        let e = err(text);
        assert!(e.contains(expected), "{text}: {e}");
    }
}

#[test]
fn unknown_keys_are_rejected_by_name() {
    let e = err("max_iteration = 3\n");
    assert!(
        e.contains("max_iteration") && e.contains("config.toml"),
        "{e}"
    );
    let e = err("[marketplace]\nnum_bot = 3\n");
    assert!(e.contains("num_bot"), "{e}");
    let e = err("[[bots]]\nid = \"a\"\nmodle = \"x\"\n");
    assert!(e.contains("modle"), "{e}");
    let e = err("[scoring.weights]\nspeed = 0.1\n");
    assert!(e.contains("speed"), "{e}");
    let e = err("[github]\nlabel = \"x\"\n");
    assert!(e.contains("label"), "{e}");
}

#[test]
fn invalid_values_say_what_is_allowed() {
    let cases = [
        ("tracker = \"jira\"", "jira"),
        ("max_iterations = 0", "allowed 1 to 1000"),
        ("[marketplace]\nnum_bots = -1", "allowed 1 to 64"),
        (
            "[marketplace]\nbase_budget_per_bot = 0",
            "allowed 1 to 10000",
        ),
        ("[marketplace]\nweight_min = 1.5", "weight_min < 1"),
        ("[marketplace]\nweight_max = 0", "weight_max ≤ 1"),
        (
            "[marketplace]\nweight_min = 0.5\nweight_max = 0.4",
            "larger than",
        ),
        ("[scoring.weights]\nrisk = 0.5", "sum to 1.300000"),
        ("[scoring.weights]\nrisk = -0.1", "allowed 0 to 1"),
        ("[defaults]\nbackend = \"gpt\"", "gpt"),
        ("[defaults]\ntimeout_secs = 0", "allowed 1 to 86400"),
        (
            "[defaults]\nbackend = \"command\"",
            "is required with backend = \"command\"",
        ),
        (
            "[defaults]\nbackend = \"replay\"",
            "is required with backend = \"replay\"",
        ),
        (
            "[defaults]\nbackend = \"openai\"\nmodel = \"m\"\ncommand = [\"x\"]",
            "only used with backend = \"command\" or \"claude\" or \"codex\"",
        ),
        (
            "[[bots]]\nid = \"a\"\nbackend = \"command\"\ncommand = [\"x\"]\nargs = [\"-v\"]",
            "only used with backend = \"claude\" or \"codex\"",
        ),
        ("[defaults]\ncommand = []", "is empty"),
        (
            "[defaults]\nprice = { input_per_mtok = 3.0 }",
            "needs both input_per_mtok and output_per_mtok",
        ),
        (
            "[defaults]\nprice = { input_per_mtok = -1.0, output_per_mtok = 1.0 }",
            "price.input_per_mtok` = -1",
        ),
        ("[defaults]\nid = \"x\"", "only allowed in [[bots]]"),
        ("[arbiter]\ntemperature = 3.0", "allowed 0 to 2"),
        (
            "[arbiter]\nbackend = \"openai\"\nbase_url = \"localhost:1234\"",
            "must start with http",
        ),
        (
            "[arbiter]\nbackend = \"openai\"\napi_key_env = \"MY-KEY\"",
            "not an environment variable",
        ),
        ("[[bots]]\nbackend = \"claude\"", "bots[0].id` is required"),
        ("[[bots]]\nid = \"Bot One\"", "not a valid bot id"),
        (
            "[[bots]]\nid = \"a\"\n[[bots]]\nid = \"a\"",
            "used by two bots",
        ),
        (
            "[marketplace]\nnum_bots = 2\n[[bots]]\nid = \"a\"",
            "num_bots` = 2 but 1",
        ),
        ("bots = []", "is empty"),
        ("[checks]\n\"Format!\" = \"x\"", "not a valid check name"),
        ("[checks]\ntest = \"  \"", "empty command"),
        ("[checks.coverage]\ncommand = \"\"", "empty command"),
        (
            "[checks]\nsetup = \" \"",
            "checks.setup` is an empty command",
        ),
        ("[github]\nready_label = \"\"", "1 to 50 characters"),
        ("[arbiter]\norder_swaps = 2", "allowed 0 to 1"),
        ("[defaults]\norder_swaps = 1", "only allowed in [arbiter]"),
        (
            "[implementer]\norder_swaps = 0",
            "only allowed in [arbiter]",
        ),
        (
            "[[bots]]\nid = \"a\"\norder_swaps = 0",
            "only allowed in [arbiter]",
        ),
        (
            "[marketplace]\naudit_rate = 1.5",
            "allowed 0 (never audit) to 1",
        ),
        (
            "[marketplace]\naudit_rate = -0.1",
            "allowed 0 (never audit) to 1",
        ),
    ];
    for (text, needle) in cases {
        let e = err(text);
        assert!(
            e.contains(needle),
            "{text:?}: {e:?} should contain {needle:?}"
        );
        assert!(e.contains("/repo/.ralph/config.toml"), "{e}");
    }
}

#[test]
fn weights_that_sum_to_one_within_rounding_are_accepted() {
    let c = parse(
        "[scoring.weights]\nspec_alignment = 0.1\ntechnical_quality = 0.1\ninnovation = 0.1\nrisk = 0.1\nefficiency = 0.1\nspecialist_validation = 0.5\n",
    )
    .unwrap();
    assert_eq!(c.scoring_weights.specialist_validation, 0.5);
}

#[test]
fn load_prefers_toml_then_prototype_json_then_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let (c, src) = Config::load(dir.path()).unwrap();
    assert_eq!(src, ConfigSource::Defaults);
    assert_eq!(c, Config::default());

    let json = r#"{"num_bots": 4, "base_budget_per_bot": 5,
        "scoring_weights": {"spec_alignment": 0.3, "technical_quality": 0.2, "innovation": 0.15,
                            "risk": 0.2, "efficiency": 0.1, "specialist_validation": 0.05},
        "weight_constraints": {"min": 0.1, "max": 0.5},
        "arbiter_model": "something the prototype had"}"#;
    fs::write(dir.path().join("config.json"), json).unwrap();
    let (c, src) = Config::load(dir.path()).unwrap();
    assert_eq!(
        src,
        ConfigSource::PrototypeJson(dir.path().join("config.json"))
    );
    assert_eq!(c.marketplace.num_bots, 4);
    assert_eq!(c.budget_pool(), 20);
    assert_eq!(
        (c.marketplace.weight_min, c.marketplace.weight_max),
        (0.1, 0.5)
    );
    assert_eq!(c.bot_ids().len(), 4);

    fs::write(dir.path().join("config.toml"), "max_iterations = 2\n").unwrap();
    let (c, src) = Config::load(dir.path()).unwrap();
    assert_eq!(src, ConfigSource::Toml(dir.path().join("config.toml")));
    assert_eq!(c.max_iterations, 2);
    assert_eq!(c.marketplace.num_bots, 3);
}

#[test]
fn bad_prototype_json_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    for (json, needle) in [
        ("{", "invalid configuration file"),
        ("[1]", "must be a JSON object"),
        (r#"{"num_bots": "three"}"#, "must be an integer"),
        (
            r#"{"weight_constraints": {"min": "low"}}"#,
            "must be a number",
        ),
        (
            r#"{"scoring_weights": {"speed": 1.0}}"#,
            "not a scoring dimension",
        ),
        (r#"{"scoring_weights": {"risk": 0.9}}"#, "must sum to 1.0"),
    ] {
        fs::write(&path, json).unwrap();
        let e = Config::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains(needle), "{json}: {e}");
        assert!(e.contains("config.json"), "{e}");
    }
}

#[test]
fn fold_params_follow_the_configuration() {
    let c =
        parse("[marketplace]\nnum_bots = 2\nbase_budget_per_bot = 7\nweight_max = 0.8\n").unwrap();
    let p = c.fold_params();
    assert_eq!(p.bots, ["smart_bot_1", "smart_bot_2"]);
    assert_eq!(p.pool, 14);
    assert_eq!(p.weight_max, 0.8);
}

#[test]
fn load_file_reads_any_path_with_the_same_checks() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("other.toml");
    fs::write(&toml, "[scoring.weights]\nrisk = 0.9\n").unwrap();
    let e = Config::load_file(&toml).unwrap_err();
    assert!(e.to_string().contains("must sum to 1.0"), "{e}");
    assert!(e.to_string().contains("other.toml"), "{e}");
    fs::write(&toml, "[arbiter]\norder_swaps = 0\n").unwrap();
    assert_eq!(Config::load_file(&toml).unwrap().order_swaps, 0);

    let json = dir.path().join("prototype.json");
    fs::write(&json, r#"{"num_bots": 2}"#).unwrap();
    assert_eq!(Config::load_file(&json).unwrap().marketplace.num_bots, 2);

    let missing = Config::load_file(&dir.path().join("missing.toml")).unwrap_err();
    assert!(matches!(missing, ConfigError::Read { .. }), "{missing}");
    assert!(missing.to_string().contains("missing.toml"));
}
