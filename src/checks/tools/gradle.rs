//! Gradle (`gradle`, `./gradlew`) and Maven (`mvn`, `./mvnw`): JVM builds that run their tests
//! themselves, each under a build lock of its own (two builds in one project would only wait for
//! each other). ralph does not read their reports: what they run is not seen into.

use super::shell::Call;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Gradle;

pub struct Maven;

impl Tool for Gradle {
    fn name(&self) -> &'static str {
        "gradle"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn inner(&self, _: &Call, _: Option<&Project>) -> Inner {
        Inner::Unknown
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "gradle" | "gradlew")
    }

    fn lock(&self, _: &Call) -> Option<&'static str> {
        Some("gradle")
    }
}

impl Tool for Maven {
    fn name(&self) -> &'static str {
        "maven"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn inner(&self, _: &Call, _: Option<&Project>) -> Inner {
        Inner::Unknown
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "mvn" | "mvnw")
    }

    fn lock(&self, _: &Call) -> Option<&'static str> {
        Some("maven")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_takes_its_own_lock() {
        let lock = |c: &str| crate::checks::tools::recognise(c, None).lock;
        assert_eq!(lock("./gradlew check"), Some("gradle"));
        assert_eq!(lock("mvn -q verify"), Some("maven"));
    }
}
