//! Helpers shared by the test binaries that fake GitHub with wiremock.

use wiremock::ResponseTemplate;

/// The repository path every fixture belongs to.
pub const REPO: &str = "/repos/octo-org/octo-repo";

/// A fixture from tests/fixtures/github/, in the shape of a real GitHub response.
pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/github/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// A JSON reply with a fixture as its body.
pub fn json_reply(status: u16, name: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(fixture(name), "application/json")
}
