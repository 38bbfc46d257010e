//! A GitLab that keeps state, for whole competitions through the binary: a wiremock server
//! answering the REST v4 endpoints ralph uses in the shapes of GitLab's API reference (issues by
//! `iid`, labels as names, resource label events recorded as labels move, notes, merge requests
//! with their own `iid`s, members' access levels, commit statuses, job traces; `404 {"message":
//! "404 Not found"}`, `409` for a second open merge request of a branch). A test reads and
//! changes the state (a maintainer's diff note, a failing job, a merge) between runs of ralph.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const TOKEN: &str = "glpat-fakeGitlabToken0123456789ab";
pub const PROJECT_PATH: &str = "acme/platform/widgets";
/// The project's root in the API, the path encoded.
pub const PROJECT: &str = "/api/v4/projects/acme%2Fplatform%2Fwidgets";
const WEB: &str = "https://gitlab.example.com";
/// ralph's own user (a project access token's bot user).
pub const ME: (u64, &str) = (31, "ralph-bot");

/// What the fake GitLab holds.
#[derive(Default)]
pub struct Lab {
    pub issues: BTreeMap<u64, Value>,
    pub label_events: BTreeMap<u64, Vec<Value>>,
    pub issue_notes: BTreeMap<u64, Vec<Value>>,
    pub mrs: BTreeMap<u64, Value>,
    pub mr_notes: BTreeMap<u64, Vec<Value>>,
    pub labels: Vec<Value>,
    /// user id → (username, access level in the project; 0: no member).
    pub users: BTreeMap<u64, (String, u32)>,
    /// commit sha → its statuses.
    pub statuses: BTreeMap<String, Vec<Value>>,
    pub traces: BTreeMap<u64, String>,
    next_id: u64,
}

fn user_json(id: u64, name: &str) -> Value {
    json!({"id": id, "username": name, "name": name, "state": "active", "locked": false,
           "avatar_url": "", "web_url": format!("{WEB}/{name}")})
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Lab {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        1000 + self.next_id
    }

    fn user(&self, id: u64) -> Value {
        let name = self.users.get(&id).map_or("ghost", |u| u.0.as_str());
        user_json(id, name)
    }

    /// Adds a user with an access level (0: not a member).
    pub fn member(&mut self, id: u64, name: &str, level: u32) {
        self.users.insert(id, (name.to_owned(), level));
    }

    /// `by` adds `label` to issue `iid`, as in GitLab's web page.
    pub fn label_by(&mut self, iid: u64, label: &str, by: u64) {
        let labels = self.issues.get_mut(&iid).unwrap()["labels"]
            .as_array_mut()
            .unwrap();
        if !labels.iter().any(|l| l == label) {
            labels.push(json!(label));
        }
        self.event(iid, "add", label, by);
    }

    fn event(&mut self, iid: u64, action: &str, label: &str, by: u64) {
        let id = self.id();
        let user = self.user(by);
        self.label_events.entry(iid).or_default().push(json!({
            "id": id, "user": user, "created_at": now(), "resource_type": "Issue",
            "resource_id": 84210 + iid, "action": action,
            "label": {"id": 100, "name": label, "color": "#0e8a16", "description": ""}
        }));
    }

    /// A note on merge request `iid`: `kind` `null`, `DiscussionNote` or `DiffNote`.
    pub fn mr_note(&mut self, iid: u64, by: u64, body: &str, kind: Value, position: Value) {
        let id = self.id();
        let author = self.user(by);
        let resolvable = !kind.is_null();
        self.mr_notes.entry(iid).or_default().push(json!({
            "id": id, "type": kind, "body": body, "author": author, "created_at": now(),
            "updated_at": now(), "system": false, "noteable_id": 55300 + iid,
            "noteable_type": "MergeRequest", "noteable_iid": iid, "resolvable": resolvable,
            "resolved": false, "resolved_by": null, "confidential": false, "internal": false,
            "position": position
        }));
    }

    /// A job of a pipeline on `sha` (its id is the job's), with its log.
    pub fn job(&mut self, sha: &str, id: u64, name: &str, status: &str, log: &str) {
        self.statuses
            .entry(sha.to_owned())
            .or_default()
            .push(json!({
                "id": id, "sha": sha, "ref": "main", "status": status, "name": name,
                "target_url": format!("{WEB}/{PROJECT_PATH}/-/jobs/{id}"), "description": null,
                "created_at": now(), "started_at": now(), "finished_at": now(),
                "allow_failure": false, "coverage": null, "pipeline_id": 7700,
                "author": user_json(ME.0, ME.1)
            }));
        self.traces.insert(id, log.to_owned());
    }

    /// The issue's labels.
    pub fn labels_of(&self, iid: u64) -> Vec<String> {
        self.issues[&iid]["labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_owned())
            .collect()
    }
}

/// The fake: the server and its state.
pub struct FakeGitlab {
    pub server: MockServer,
    pub lab: Arc<Mutex<Lab>>,
}

impl FakeGitlab {
    /// A project with issue #12 (the fixture's, labelled `ready` by `maintainer`, a Maintainer)
    /// and ralph's user, a Developer.
    pub async fn start() -> FakeGitlab {
        let mut lab = Lab::default();
        lab.member(ME.0, ME.1, 30);
        lab.member(23, "maintainer", 40);
        lab.member(40, "reporter", 20);
        let mut issue = crate::gitlab_tracker::fixture("issue_12.json");
        issue["labels"] = json!([]);
        lab.issues.insert(12, issue);
        lab.label_by(12, "ready", 23);
        lab.labels = crate::gitlab_tracker::fixture("labels.json")
            .as_array()
            .unwrap()
            .clone();
        let lab = Arc::new(Mutex::new(lab));
        let server = MockServer::start().await;
        Mock::given(wiremock::matchers::any())
            .respond_with(Handler(lab.clone()))
            .mount(&server)
            .await;
        FakeGitlab { server, lab }
    }

    pub fn lab(&self) -> std::sync::MutexGuard<'_, Lab> {
        self.lab.lock().unwrap()
    }

    /// `METHOD /path` of every request so far.
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

struct Handler(Arc<Mutex<Lab>>);

fn not_found() -> ResponseTemplate {
    ResponseTemplate::new(404).set_body_json(json!({"message": "404 Not found"}))
}

fn ok(v: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(v)
}

fn query(req: &Request, key: &str) -> Option<String> {
    req.url
        .query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

impl Respond for Handler {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        if req
            .headers
            .get("private-token")
            .and_then(|v| v.to_str().ok())
            != Some(TOKEN)
        {
            return ResponseTemplate::new(401)
                .set_body_json(json!({"message": "401 Unauthorized"}));
        }
        let mut lab = self.0.lock().unwrap();
        let path = req.url.path().to_owned();
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let method = req.method.as_str();
        match path.as_str() {
            "/api/v4/user" => return ok(lab.user(ME.0)),
            "/api/v4/users" => {
                let name = query(req, "username").unwrap_or_default();
                let found: Vec<Value> = lab
                    .users
                    .iter()
                    .filter(|(_, u)| u.0 == name)
                    .map(|(id, u)| user_json(*id, &u.0))
                    .collect();
                return ok(json!(found));
            }
            "/api/v4/personal_access_tokens/self" => {
                return ok(crate::gitlab_tracker::fixture("token_self.json"))
            }
            _ => {}
        }
        let Some(rest) = path.strip_prefix(PROJECT) else {
            return not_found();
        };
        let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
        match (method, parts.as_slice()) {
            ("GET", []) => ok(crate::gitlab_tracker::fixture("project.json")),
            ("GET", ["labels"]) => ok(json!(lab.labels)),
            ("POST", ["labels"]) => {
                if lab.labels.iter().any(|l| l["name"] == body["name"]) {
                    return ResponseTemplate::new(409)
                        .set_body_json(json!({"message": "Label already exists"}));
                }
                lab.labels.push(body.clone());
                ResponseTemplate::new(201).set_body_json(body)
            }
            ("GET", ["issues"]) => ok(issues(&lab, req)),
            ("GET", ["issues", n]) => issue_of(&lab, n).map_or_else(not_found, ok),
            ("PUT", ["issues", n]) => update_issue(&mut lab, n, &body),
            ("GET", ["issues", n, "notes"]) => ok(json!(lab
                .issue_notes
                .get(&num(n))
                .cloned()
                .unwrap_or_default())),
            ("POST", ["issues", n, "notes"]) => {
                let note = new_note(&mut lab, &body, "Issue");
                lab.issue_notes
                    .entry(num(n))
                    .or_default()
                    .push(note.clone());
                ResponseTemplate::new(201).set_body_json(note)
            }
            ("GET", ["issues", n, "resource_label_events"]) => ok(json!(lab
                .label_events
                .get(&num(n))
                .cloned()
                .unwrap_or_default())),
            ("GET", ["members", "all", id]) => match lab.users.get(&num(id)) {
                Some((name, level)) if *level > 0 => {
                    let mut m = user_json(num(id), name);
                    m["access_level"] = json!(level);
                    m["membership_state"] = json!("active");
                    ok(m)
                }
                _ => not_found(),
            },
            ("POST", ["merge_requests"]) => create_mr(&mut lab, &body),
            ("GET", ["merge_requests"]) => ok(merge_requests(&lab, req)),
            ("GET", ["merge_requests", n]) => {
                lab.mrs.get(&num(n)).cloned().map_or_else(not_found, ok)
            }
            ("PUT", ["merge_requests", n]) => {
                let Some(mr) = lab.mrs.get_mut(&num(n)) else {
                    return not_found();
                };
                add_labels(mr, &body);
                ok(mr.clone())
            }
            ("GET", ["merge_requests", n, "notes"]) => ok(json!(lab
                .mr_notes
                .get(&num(n))
                .cloned()
                .unwrap_or_default())),
            ("POST", ["merge_requests", n, "notes"]) => {
                let note = new_note(&mut lab, &body, "MergeRequest");
                lab.mr_notes.entry(num(n)).or_default().push(note.clone());
                ResponseTemplate::new(201).set_body_json(note)
            }
            ("GET", ["repository", "commits", sha, "statuses"]) => {
                ok(json!(lab.statuses.get(*sha).cloned().unwrap_or_default()))
            }
            ("GET", ["jobs", id, "trace"]) => match lab.traces.get(&num(id)) {
                Some(log) => ResponseTemplate::new(200).set_body_raw(log.clone(), "text/plain"),
                None => not_found(),
            },
            _ => not_found(),
        }
    }
}

fn num(s: &str) -> u64 {
    s.parse().unwrap_or(0)
}

fn issue_of(lab: &Lab, n: &str) -> Option<Value> {
    lab.issues.get(&num(n)).cloned()
}

/// `GET /issues?state=&labels=`: every label asked for, oldest first.
fn issues(lab: &Lab, req: &Request) -> Value {
    let state = query(req, "state").unwrap_or_else(|| "all".into());
    let wanted: Vec<String> = query(req, "labels")
        .map(|l| l.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let list: Vec<Value> = lab
        .issues
        .values()
        .filter(|i| state == "all" || i["state"] == state.as_str())
        .filter(|i| {
            wanted.iter().all(|w| {
                i["labels"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|l| l == w.as_str())
            })
        })
        .cloned()
        .collect();
    json!(list)
}

fn add_labels(item: &mut Value, body: &Value) {
    if let Some(add) = body["add_labels"].as_str() {
        let labels = item["labels"].as_array_mut().unwrap();
        for l in add.split(',') {
            if !labels.iter().any(|x| x == l) {
                labels.push(json!(l));
            }
        }
    }
}

/// `PUT /issues/:iid`: labels added and removed (each recorded as ralph's label event), the
/// description, the assignees.
fn update_issue(lab: &mut Lab, n: &str, body: &Value) -> ResponseTemplate {
    let iid = num(n);
    let Some(issue) = lab.issues.get(&iid).cloned() else {
        return not_found();
    };
    let mut issue = issue;
    let before: Vec<Value> = issue["labels"].as_array().unwrap().clone();
    add_labels(&mut issue, body);
    if let Some(remove) = body["remove_labels"].as_str() {
        let gone: Vec<&str> = remove.split(',').collect();
        issue["labels"]
            .as_array_mut()
            .unwrap()
            .retain(|l| !gone.contains(&l.as_str().unwrap()));
    }
    if let Some(d) = body.get("description") {
        issue["description"] = d.clone();
    }
    if let Some(ids) = body["assignee_ids"].as_array() {
        let users: Vec<Value> = ids.iter().map(|i| lab.user(i.as_u64().unwrap())).collect();
        issue["assignees"] = json!(users);
    }
    let after = issue["labels"].as_array().unwrap().clone();
    for l in after.iter().filter(|l| !before.contains(l)) {
        lab.event(iid, "add", l.as_str().unwrap(), ME.0);
    }
    for l in before.iter().filter(|l| !after.contains(l)) {
        lab.event(iid, "remove", l.as_str().unwrap(), ME.0);
    }
    lab.issues.insert(iid, issue.clone());
    ok(issue)
}

fn new_note(lab: &mut Lab, body: &Value, on: &str) -> Value {
    let id = lab.id();
    json!({"id": id, "type": null, "body": body["body"], "author": lab.user(ME.0),
           "created_at": now(), "updated_at": now(), "system": false, "noteable_type": on,
           "resolvable": false, "confidential": false, "internal": false})
}

/// `POST /merge_requests`: numbered from 7 (issues and merge requests count apart); 409 when
/// the branch has an open one.
fn create_mr(lab: &mut Lab, body: &Value) -> ResponseTemplate {
    let branch = body["source_branch"].as_str().unwrap_or_default();
    if let Some(open) = lab
        .mrs
        .values()
        .find(|m| m["source_branch"] == branch && m["state"] == "opened")
    {
        return ResponseTemplate::new(409).set_body_json(json!({
            "message": [format!("Another open merge request already exists for this source branch: !{}", open["iid"])]
        }));
    }
    let iid = 7 + lab.mrs.len() as u64;
    let mut mr = crate::gitlab_tracker::fixture("merge_request.json");
    mr["iid"] = json!(iid);
    mr["id"] = json!(55300 + iid);
    mr["title"] = body["title"].clone();
    mr["description"] = body["description"].clone();
    mr["source_branch"] = body["source_branch"].clone();
    mr["target_branch"] = body["target_branch"].clone();
    mr["created_at"] = json!(now());
    mr["sha"] = Value::Null;
    mr["diff_refs"] = Value::Null;
    mr["web_url"] = json!(format!("{WEB}/{PROJECT_PATH}/-/merge_requests/{iid}"));
    lab.mrs.insert(iid, mr.clone());
    ResponseTemplate::new(201).set_body_json(mr)
}

/// `GET /merge_requests?state=&source_branch=`.
fn merge_requests(lab: &Lab, req: &Request) -> Value {
    let state = query(req, "state").unwrap_or_else(|| "all".into());
    let branch = query(req, "source_branch");
    let list: Vec<Value> = lab
        .mrs
        .values()
        .rev()
        .filter(|m| state == "all" || m["state"] == state.as_str())
        .filter(|m| branch.as_deref().is_none_or(|b| m["source_branch"] == b))
        .map(|m| {
            // Lists carry no diff_refs.
            let mut m = m.clone();
            m.as_object_mut().unwrap().remove("diff_refs");
            m
        })
        .collect();
    json!(list)
}
