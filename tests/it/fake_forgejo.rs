//! A Forgejo that keeps state, for whole competitions through the binary: a wiremock server
//! answering the API v1 endpoints ralph uses in the shapes of Forgejo's API reference (issues and
//! pull requests numbered together, labels applied by id and recorded in the timeline, comments,
//! reviews and their line comments, collaborator permissions, combined commit statuses, an
//! Actions job's raw log at its page; `404 {"message"}`, `409` for a second pull request of a
//! branch). A test reads and changes the state between runs of ralph.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const TOKEN: &str = "fakeforgejo0123456789abcdef01234567";
pub const REPO_PATH: &str = "acme/widgets";
const REPO: &str = "/api/v1/repos/acme/widgets";
pub const ME: &str = "ralph-bot";

/// What the fake Forgejo holds.
#[derive(Default)]
pub struct Forge {
    /// Issues and pull requests by their shared number (a pull request's issue side).
    pub issues: BTreeMap<u64, Value>,
    pub pulls: BTreeMap<u64, Value>,
    pub comments: BTreeMap<u64, Vec<Value>>,
    pub timeline: BTreeMap<u64, Vec<Value>>,
    /// Reviews of a pull request, each with its line comments.
    pub reviews: BTreeMap<u64, Vec<(Value, Vec<Value>)>>,
    pub labels: Vec<Value>,
    /// login → permission (`admin`, `write`, `read`).
    pub users: BTreeMap<String, String>,
    pub statuses: BTreeMap<String, Vec<Value>>,
    /// job page path → raw log.
    pub logs: BTreeMap<String, String>,
    /// The server's address, for links.
    pub web: String,
    next_id: u64,
}

fn user(login: &str) -> Value {
    json!({"id": login.len(), "login": login, "username": login, "full_name": "", "avatar_url": ""})
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A moment later: Forgejo's times have whole seconds, and a review must be newer than
/// ralph's commit of the same second.
fn later() -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(2))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl Forge {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        5000 + self.next_id
    }

    fn label(&self, name: &str) -> Option<Value> {
        self.labels.iter().find(|l| l["name"] == name).cloned()
    }

    /// `by` applies `label` to issue `n` in the web page.
    pub fn label_by(&mut self, n: u64, name: &str, by: &str) {
        let label = self.label(name).unwrap();
        let labels = self.issues.get_mut(&n).unwrap()["labels"]
            .as_array_mut()
            .unwrap();
        if !labels.iter().any(|l| l["name"] == name) {
            labels.push(label.clone());
        }
        self.record(n, true, label, by);
    }

    fn record(&mut self, n: u64, added: bool, label: Value, by: &str) {
        let id = self.id();
        self.timeline.entry(n).or_default().push(json!({
            "id": id, "type": "label", "body": if added { "1" } else { "" }, "user": user(by),
            "label": label, "created_at": now(), "updated_at": now()
        }));
    }

    /// A submitted review of pull request `n` with one comment on `path:line`.
    pub fn review(
        &mut self,
        n: u64,
        by: &str,
        state: &str,
        body: &str,
        line: Option<(&str, u64, &str)>,
    ) {
        let id = self.id();
        let comments: Vec<Value> = line
            .map(|(path, at, text)| {
                json!({"id": id + 1, "user": user(by), "body": text, "path": path, "position": at,
                       "original_position": 0, "created_at": later(), "pull_request_review_id": id})
            })
            .into_iter()
            .collect();
        self.next_id += 1;
        let review = json!({"id": id, "user": user(by), "body": body, "state": state,
            "submitted_at": later(), "comments_count": comments.len(), "dismissed": false,
            "stale": false, "official": true, "commit_id": ""});
        self.reviews.entry(n).or_default().push((review, comments));
    }

    /// A commit status on `sha` from an Actions job, with its raw log.
    pub fn job(&mut self, sha: &str, context: &str, state: &str, run: u64, log: &str) {
        let page = format!("/{REPO_PATH}/actions/runs/{run}/jobs/0");
        let id = self.id();
        self.statuses.entry(sha.to_owned()).or_default().push(json!({
            "id": id, "status": state, "context": context, "description": "",
            "target_url": format!("{}{page}", self.web), "created_at": now(), "creator": user(ME)
        }));
        self.logs.insert(format!("{page}/logs"), log.to_owned());
    }

    pub fn label_names(&self, n: u64) -> Vec<String> {
        let item = self.issues.get(&n).or_else(|| self.pulls.get(&n)).unwrap();
        item["labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

pub struct FakeForgejo {
    pub server: MockServer,
    pub state: Arc<Mutex<Forge>>,
}

impl FakeForgejo {
    /// A repository with issue #12 (the fixture's, labelled `ready` by `maintainer`, who may
    /// write), the workflow labels, and a `reader` with read access.
    pub async fn start() -> FakeForgejo {
        let server = MockServer::start().await;
        let mut f = Forge {
            web: server.uri(),
            ..Forge::default()
        };
        f.labels = crate::forgejo_tracker::fixture("labels.json")
            .as_array()
            .unwrap()
            .clone();
        for (login, p) in [(ME, "write"), ("maintainer", "write"), ("reader", "read")] {
            f.users.insert(login.into(), p.into());
        }
        let mut issue = crate::forgejo_tracker::fixture("issue_12.json");
        issue["labels"] = json!([]);
        f.issues.insert(12, issue);
        f.label_by(12, "ready", "maintainer");
        let state = Arc::new(Mutex::new(f));
        Mock::given(wiremock::matchers::any())
            .respond_with(Handler(state.clone()))
            .mount(&server)
            .await;
        FakeForgejo { server, state }
    }

    pub fn forge(&self) -> std::sync::MutexGuard<'_, Forge> {
        self.state.lock().unwrap()
    }

    pub async fn calls(&self) -> Vec<String> {
        self.server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .map(|r| format!("{} {}", r.method, r.url.path()))
            .collect()
    }
}

struct Handler(Arc<Mutex<Forge>>);

fn ok(v: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(v)
}

fn not_found() -> ResponseTemplate {
    ResponseTemplate::new(404)
        .set_body_json(json!({"message": "The target couldn't be found.", "url": "", "errors": []}))
}

fn num(s: &str) -> u64 {
    s.parse().unwrap_or(0)
}

impl Respond for Handler {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        if req
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            != Some(&format!("token {TOKEN}"))
        {
            return ResponseTemplate::new(401)
                .set_body_json(json!({"message": "user does not exist", "url": ""}));
        }
        let mut f = self.0.lock().unwrap();
        let path = req.url.path().to_owned();
        if let Some(log) = f.logs.get(&path) {
            return ResponseTemplate::new(200)
                .set_body_raw(log.clone(), "text/plain; charset=utf-8");
        }
        if path == "/api/v1/user" {
            return ok(user(ME));
        }
        let Some(rest) = path.strip_prefix(REPO) else {
            return not_found();
        };
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let query = |k: &str| {
            req.url
                .query_pairs()
                .find(|(q, _)| q == k)
                .map(|(_, v)| v.into_owned())
        };
        let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
        match (req.method.as_str(), parts.as_slice()) {
            ("GET", []) => ok(crate::forgejo_tracker::fixture("repository.json")),
            ("GET", ["labels"]) => ok(json!(f.labels)),
            ("GET", ["issues"]) => {
                let state = query("state").unwrap_or_else(|| "open".into());
                let list: Vec<Value> = f
                    .issues
                    .values()
                    .filter(|i| state == "all" || i["state"] == state.as_str())
                    .cloned()
                    .collect();
                ok(json!(list))
            }
            ("GET", ["issues", n]) => f.issues.get(&num(n)).cloned().map_or_else(not_found, ok),
            ("PATCH", ["issues", n]) => {
                let Some(issue) = f.issues.get_mut(&num(n)) else {
                    return not_found();
                };
                if let Some(b) = body.get("body") {
                    issue["body"] = b.clone();
                }
                if let Some(a) = body["assignees"].as_array() {
                    issue["assignees"] = json!(a
                        .iter()
                        .map(|l| user(l.as_str().unwrap()))
                        .collect::<Vec<_>>());
                }
                ok(issue.clone())
            }
            ("POST", ["issues", n, "labels"]) => {
                let ids: Vec<u64> = body["labels"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.as_u64().unwrap())
                    .collect();
                let added: Vec<Value> = f
                    .labels
                    .iter()
                    .filter(|l| ids.contains(&l["id"].as_u64().unwrap()))
                    .cloned()
                    .collect();
                let n = num(n);
                let item = match f.issues.get_mut(&n) {
                    Some(i) => i,
                    None => f.pulls.get_mut(&n).unwrap(),
                };
                let labels = item["labels"].as_array_mut().unwrap();
                let mut new = Vec::new();
                for l in added {
                    if !labels.iter().any(|x| x["id"] == l["id"]) {
                        labels.push(l.clone());
                        new.push(l);
                    }
                }
                let all = labels.clone();
                for l in new {
                    f.record(n, true, l, ME);
                }
                ok(json!(all))
            }
            ("DELETE", ["issues", n, "labels", id]) => {
                let n = num(n);
                let Some(issue) = f.issues.get_mut(&n) else {
                    return not_found();
                };
                let labels = issue["labels"].as_array_mut().unwrap();
                let Some(pos) = labels.iter().position(|l| l["id"] == num(id)) else {
                    return not_found();
                };
                let l = labels.remove(pos);
                f.record(n, false, l, ME);
                ResponseTemplate::new(204)
            }
            ("GET", ["issues", n, "comments"]) => {
                ok(json!(f.comments.get(&num(n)).cloned().unwrap_or_default()))
            }
            ("POST", ["issues", n, "comments"]) => {
                let id = f.id();
                let c = json!({"id": id, "user": user(ME), "body": body["body"], "created_at": now(), "updated_at": now()});
                f.comments.entry(num(n)).or_default().push(c.clone());
                ResponseTemplate::new(201).set_body_json(c)
            }
            ("GET", ["issues", n, "timeline"]) => {
                ok(json!(f.timeline.get(&num(n)).cloned().unwrap_or_default()))
            }
            ("GET", ["collaborators", login, "permission"]) => match f.users.get(*login) {
                Some(p) => ok(json!({"permission": p, "role_name": p, "user": user(login)})),
                None => ResponseTemplate::new(403)
                    .set_body_json(json!({"message": "user should be collaborator", "url": ""})),
            },
            ("POST", ["pulls"]) => create_pull(&mut f, &body),
            ("GET", ["pulls"]) => {
                let state = query("state").unwrap_or_else(|| "open".into());
                let list: Vec<Value> = f
                    .pulls
                    .values()
                    .rev()
                    .filter(|p| state == "all" || p["state"] == state.as_str())
                    .cloned()
                    .collect();
                ok(json!(list))
            }
            ("GET", ["pulls", n]) => f.pulls.get(&num(n)).cloned().map_or_else(not_found, ok),
            ("GET", ["pulls", n, "reviews"]) => ok(json!(f
                .reviews
                .get(&num(n))
                .map(|r| r.iter().map(|(v, _)| v.clone()).collect::<Vec<_>>())
                .unwrap_or_default())),
            ("GET", ["pulls", n, "reviews", id, "comments"]) => {
                let found = f
                    .reviews
                    .get(&num(n))
                    .and_then(|r| r.iter().find(|(v, _)| v["id"] == num(id)));
                ok(json!(found.map(|(_, c)| c.clone()).unwrap_or_default()))
            }
            ("GET", ["commits", sha, "status"]) => {
                let statuses = f.statuses.get(*sha).cloned().unwrap_or_default();
                ok(
                    json!({"state": if statuses.is_empty() { "" } else { "pending" }, "sha": sha, "total_count": statuses.len(), "statuses": statuses}),
                )
            }
            _ => not_found(),
        }
    }
}

/// `POST /pulls`: the next number after the issues', 409 when the branch has an open one.
fn create_pull(f: &mut Forge, body: &Value) -> ResponseTemplate {
    if f.pulls
        .values()
        .any(|p| p["head"]["ref"] == body["head"] && p["state"] == "open")
    {
        return ResponseTemplate::new(409).set_body_json(
            json!({"message": "pull request already exists for these targets", "url": ""}),
        );
    }
    let n = f
        .issues
        .keys()
        .chain(f.pulls.keys())
        .max()
        .copied()
        .unwrap_or(0)
        + 1;
    let mut pr = crate::forgejo_tracker::fixture("pull_13.json");
    pr["number"] = json!(n);
    pr["title"] = body["title"].clone();
    pr["body"] = body["body"].clone();
    pr["head"]["ref"] = body["head"].clone();
    pr["head"]["label"] = body["head"].clone();
    pr["head"]["sha"] = Value::Null;
    pr["base"]["ref"] = body["base"].clone();
    pr["base"]["sha"] = Value::Null;
    pr["created_at"] = json!(now());
    pr["html_url"] = json!(format!("{}/{REPO_PATH}/pulls/{n}", f.web));
    f.pulls.insert(n, pr.clone());
    ResponseTemplate::new(201).set_body_json(pr)
}
