//! JUnit XML, the report format several runners write (pytest's `--junitxml`, meson's
//! `testlog.junit.xml`): each test case by `classname::name`, failures and errors failed (with
//! their message), skipped ones left out.

use crate::checks::outcomes::TestOutcomes;

/// The unescaped value of the attribute `name` of an XML element.
fn attr(e: &quick_xml::events::BytesStart<'_>, name: &[u8]) -> Option<String> {
    let a = e.try_get_attribute(name).ok()??;
    a.unescape_value().ok().map(|v| v.into_owned())
}

/// The test cases of a JUnit XML report, named for `runner`. `None` when the text is not XML
/// holding a test case.
pub fn read(xml: &str, runner: &str) -> Option<TestOutcomes> {
    use quick_xml::events::Event;
    let mut t = TestOutcomes::named(runner);
    let mut reader = quick_xml::Reader::from_str(xml);
    // The open test case.
    let mut case: Option<Case> = None;
    let mut seen = false;
    loop {
        let event = reader.read_event().ok()?;
        let (e, empty) = match &event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(e) if e.local_name().as_ref() == b"testcase" => {
                if let Some(c) = case.take() {
                    c.record(&mut t);
                }
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        match e.local_name().as_ref() {
            b"testcase" => {
                seen = true;
                let opened = Case {
                    id: format!(
                        "{}::{}",
                        attr(e, b"classname").unwrap_or_default(),
                        attr(e, b"name").unwrap_or_default()
                    ),
                    failed: None,
                    skipped: false,
                };
                if empty {
                    opened.record(&mut t);
                } else {
                    case = Some(opened);
                }
            }
            b"failure" | b"error" => {
                if let Some(Case { failed, .. }) = case.as_mut() {
                    if failed.is_none() {
                        *failed = Some(failure_message(e));
                    }
                }
            }
            b"skipped" => {
                if let Some(Case { skipped, .. }) = case.as_mut() {
                    *skipped = true;
                }
            }
            _ => {}
        }
    }
    t.passed_count = t.passed.len() as u64;
    t.failed_count = t.failed.len() as u64;
    seen.then_some(t)
}

/// A test case of a JUnit report as it is read.
struct Case {
    /// `classname::name`.
    id: String,
    /// It failed, with its message when it has one.
    failed: Option<Option<String>>,
    skipped: bool,
}

impl Case {
    /// Adds the case to `t`: failed (with its message), passed, or — skipped — nowhere.
    fn record(self, t: &mut TestOutcomes) {
        match self.failed {
            Some(message) => {
                if let Some(m) = message {
                    t.messages.insert(self.id.clone(), m);
                }
                t.failed.insert(self.id);
            }
            None if !self.skipped => {
                t.passed.insert(self.id);
            }
            None => {}
        }
    }
}

/// The message of a `<failure>` or `<error>` element: its first line, at most 300 characters;
/// `None` when it is empty or missing.
fn failure_message(e: &quick_xml::events::BytesStart<'_>) -> Option<String> {
    attr(e, b"message")
        .map(|m| {
            m.lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(300)
                .collect::<String>()
        })
        .filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_is_named_failures_with_their_message() {
        let xml = r#"<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_a" name="test_ok" time="0.1" />
<testcase classname="tests.test_a" name="test_bad" time="0.1"><failure message="assert 1 == 2">x</failure></testcase>
<testcase classname="tests.test_a" name="test_err[a&amp;b]" time="0.1"><error message="boom"/></testcase>
<testcase classname="tests.test_a" name="test_skip" time="0.0"><skipped message="no"/></testcase>
</testsuite></testsuites>"#;
        let t = read(xml, "pytest").unwrap();
        assert_eq!(t.passed.len(), 1);
        assert_eq!(
            t.failed_lines(1),
            [
                "FAILED tests.test_a::test_bad - assert 1 == 2",
                "… and 1 more"
            ]
        );
        assert_eq!(t.messages["tests.test_a::test_err[a&b]"], "boom");
        assert_eq!((t.failed_count, t.runner.as_str()), (2, "pytest"));
    }

    #[test]
    fn attributes_are_read_as_xml_reads_them() {
        // pytest writes a message's newlines as `&#10;`; `>` may stand inside an attribute;
        // attributes may be single-quoted and on their own lines.
        let xml = "<testsuite><testcase\n classname='tests.test_b' name=\"test_cmp[a>b]\"><failure message=\"assert 3 &gt; 4&#10;where 3 = f()\">trace</failure></testcase><testcase classname=\"tests.test_b\" name=\"test_fine\"></testcase></testsuite>";
        let t = read(xml, "pytest").unwrap();
        assert!(t.failed.contains("tests.test_b::test_cmp[a>b]"), "{t:?}");
        assert_eq!(t.messages["tests.test_b::test_cmp[a>b]"], "assert 3 > 4");
        assert!(t.passed.contains("tests.test_b::test_fine"));
        assert!(read("not xml at all", "pytest").is_none());
    }
}
