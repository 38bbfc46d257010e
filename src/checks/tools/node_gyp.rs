//! node-gyp, which builds a Node addon from its `binding.gyp`: the project's own copy (never
//! fetched: `npx --no-install`) builds it in place.

use super::native::NativeSpec;
use super::shell::Call;
use super::tool::{Env, Role, Tool};
use crate::checks::project::Project;

pub struct NodeGyp;

impl Tool for NodeGyp {
    fn name(&self) -> &'static str {
        "node-gyp"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "node-gyp"
    }

    fn native(&self, env: &Env) -> Option<NativeSpec> {
        env.project.is_file("binding.gyp").then(|| NativeSpec {
            command: "npx --no-install node-gyp rebuild".into(),
            reason: "a node-gyp addon (binding.gyp)".into(),
            rebuild: None,
            rust: false,
        })
    }
}
