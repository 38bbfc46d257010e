//! Links, climbs, FIFOs and bounds, tried on real folders.

use super::*;
use std::os::unix::fs::symlink;

fn setup() -> (tempfile::TempDir, tempfile::TempDir, UntrustedDir) {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "token=abc").unwrap();
    let inside = tempfile::tempdir().unwrap();
    let dir = UntrustedDir::open(inside.path()).unwrap();
    (outside, inside, dir)
}

#[test]
fn a_link_is_read_as_a_link_and_never_followed() {
    let (outside, inside, dir) = setup();
    symlink(outside.path().join("secret"), inside.path().join("a")).unwrap();
    assert_eq!(
        dir.read(Path::new("a"), 100).unwrap(),
        Some(Node::Link(outside.path().join("secret")))
    );
    let refused = dir.read_file(Path::new("a"), 100).unwrap_err();
    assert!(refused.to_string().contains("a symbolic link"), "{refused}");
}

#[test]
fn a_folder_on_the_way_that_is_a_link_is_refused_for_reads_and_writes() {
    let (outside, inside, dir) = setup();
    symlink(outside.path(), inside.path().join("d")).unwrap();
    let refused = dir.read(Path::new("d/secret"), 100).unwrap_err();
    assert!(matches!(refused, Refused::Outside { .. }), "{refused}");
    assert!(dir.remove(Path::new("d/secret")).is_err());
    assert!(
        outside.path().join("secret").exists(),
        "nothing removed outside"
    );
    dir.write(Path::new("d/planted"), b"x").unwrap();
    assert!(
        !outside.path().join("planted").exists(),
        "nothing written outside: the link is replaced by a folder"
    );
    assert_eq!(
        std::fs::read_to_string(inside.path().join("d/planted")).unwrap(),
        "x"
    );
}

#[test]
fn writing_over_a_link_replaces_the_link_not_its_target() {
    let (outside, inside, dir) = setup();
    symlink(outside.path().join("secret"), inside.path().join("f")).unwrap();
    dir.write(Path::new("f"), b"mine").unwrap();
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret")).unwrap(),
        "token=abc"
    );
    assert_eq!(
        std::fs::read_to_string(inside.path().join("f")).unwrap(),
        "mine"
    );
    assert!(!std::fs::symlink_metadata(inside.path().join("f"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_link_is_put_back_as_a_link() {
    let (_outside, inside, dir) = setup();
    dir.put(Path::new("x/y/l"), &Node::Link("../../target".into()))
        .unwrap();
    assert_eq!(
        std::fs::read_link(inside.path().join("x/y/l")).unwrap(),
        PathBuf::from("../../target")
    );
}

#[test]
fn paths_that_climb_or_are_absolute_are_refused() {
    let (_o, _i, dir) = setup();
    for p in ["../secret", "/etc/passwd", "a/../../b", ""] {
        assert!(
            matches!(dir.read(Path::new(p), 10), Err(Refused::Outside { .. })),
            "{p}"
        );
    }
}

#[test]
fn a_fifo_is_refused_by_its_kind_without_blocking() {
    let (_o, inside, dir) = setup();
    let fifo = inside.path().join("report.xml");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    let refused = dir.read_file(Path::new("report.xml"), 100).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "report.xml is a FIFO, not a regular file: ignored"
    );
    assert!(dir.read(Path::new("report.xml"), 100).is_err());
    assert_eq!(
        dir.kind(Path::new("report.xml")),
        Some(Kind::Special("a FIFO"))
    );
}

#[test]
fn reads_are_bounded() {
    let (_o, inside, dir) = setup();
    std::fs::write(inside.path().join("big"), vec![b'x'; 1000]).unwrap();
    assert!(matches!(
        dir.read_file(Path::new("big"), 999),
        Err(Refused::TooLarge { size: 1000, .. })
    ));
    assert_eq!(dir.read_file(Path::new("big"), 1000).unwrap().len(), 1000);
}

#[test]
fn removal_takes_the_link_and_leaves_its_target() {
    let (outside, inside, dir) = setup();
    std::fs::create_dir(inside.path().join("d")).unwrap();
    symlink(outside.path(), inside.path().join("d/out")).unwrap();
    std::fs::write(inside.path().join("d/f"), "x").unwrap();
    dir.remove(Path::new("d")).unwrap();
    assert!(!inside.path().join("d").exists());
    assert!(outside.path().join("secret").exists());
    dir.remove(Path::new("never/there")).unwrap();
}

#[test]
fn empty_parents_go_up_to_the_root() {
    let (_o, inside, dir) = setup();
    dir.write(Path::new("a/b/c/f"), b"x").unwrap();
    dir.remove(Path::new("a/b/c/f")).unwrap();
    dir.remove_empty_parents(Path::new("a/b/c/f"));
    assert!(!inside.path().join("a").exists());
    assert!(inside.path().exists());
}

#[test]
fn files_keep_their_execute_bit() {
    let (_o, inside, dir) = setup();
    dir.put(
        Path::new("run.sh"),
        &Node::File {
            bytes: b"#!/bin/sh\n".to_vec(),
            executable: true,
        },
    )
    .unwrap();
    assert!(matches!(
        dir.read(Path::new("run.sh"), 100).unwrap(),
        Some(Node::File {
            executable: true,
            ..
        })
    ));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(inside.path().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[test]
fn a_copy_keeps_links_as_links_leaves_special_files_out_and_stops_at_its_bound() {
    use std::os::unix::fs::PermissionsExt;
    let (outside, inside, _dir) = setup();
    let root = inside.path();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::write(root.join("src/deep/a.c"), "int a;").unwrap();
    std::fs::write(root.join("run.sh"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    symlink(outside.path().join("secret"), root.join("leak")).unwrap();
    symlink(outside.path(), root.join("elsewhere")).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        root.join("pipe"),
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    let copy = tempfile::tempdir().unwrap();
    let bytes = copy_tree(root, copy.path(), 1 << 20).unwrap();
    assert_eq!(bytes, 16, "a.c and run.sh; nothing behind a link");
    let c = copy.path();
    assert_eq!(
        std::fs::read_to_string(c.join("src/deep/a.c")).unwrap(),
        "int a;"
    );
    let mode = std::fs::metadata(c.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "still executable");
    assert_eq!(
        std::fs::read_link(c.join("leak")).unwrap(),
        outside.path().join("secret"),
        "a link stays a link"
    );
    assert!(std::fs::symlink_metadata(c.join("elsewhere"))
        .unwrap()
        .is_symlink());
    assert!(
        !c.join("pipe").exists(),
        "a FIFO is not copied (nor opened)"
    );
    let small = tempfile::tempdir().unwrap();
    let over = copy_tree(root, small.path(), 8).unwrap_err();
    assert!(
        over.to_string().contains("larger than") || over.to_string().contains("more than"),
        "{over}"
    );
}

#[test]
fn touching_sets_a_files_time_and_leaves_a_links_target_alone() {
    let (outside, inside, dir) = setup();
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    let set_old = |p: &Path| {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(old)
            .unwrap()
    };
    let modified = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    std::fs::write(inside.path().join("root.rs"), "").unwrap();
    set_old(&inside.path().join("root.rs"));
    set_old(&outside.path().join("secret"));
    symlink(outside.path().join("secret"), inside.path().join("l")).unwrap();
    dir.touch(Path::new("root.rs")).unwrap();
    dir.touch(Path::new("l")).unwrap();
    dir.touch(Path::new("missing.rs")).unwrap();
    assert!(modified(&inside.path().join("root.rs")) > old);
    assert_eq!(modified(&outside.path().join("secret")), old);
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret")).unwrap(),
        "token=abc"
    );
}
