//! A copy of an untrusted folder into a folder of ralph's own: regular files by their bytes
//! (execute bits kept), links as links (their text, never followed), folders made; FIFOs,
//! devices and sockets left out. Bounded: past `max` bytes the copy stops with an error.

use super::{list_in, Kind, Node, UntrustedDir};
use std::io;
use std::path::Path;

/// The most entries one copy makes: a bound on a hostile tree of empty files.
const MAX_ENTRIES: usize = 500_000;

/// Copies the contents of `src` into the existing folder `dst`; the bytes copied. Fails past
/// `max` bytes or [`MAX_ENTRIES`] entries (what was copied stays: the caller removes `dst`).
pub fn copy_tree(src: &Path, dst: &Path, max: u64) -> io::Result<u64> {
    let dir = UntrustedDir::open(src)?;
    let mut budget = Budget {
        bytes: 0,
        entries: 0,
        max,
    };
    copy_dir(&dir, Path::new(""), dst, &mut budget)?;
    Ok(budget.bytes)
}

struct Budget {
    bytes: u64,
    entries: usize,
    max: u64,
}

impl Budget {
    fn take(&mut self, bytes: u64) -> io::Result<()> {
        self.bytes += bytes;
        self.entries += 1;
        if self.bytes > self.max || self.entries > MAX_ENTRIES {
            return Err(io::Error::other(format!(
                "more than {} MiB or {MAX_ENTRIES} entries",
                self.max >> 20
            )));
        }
        Ok(())
    }
}

fn copy_dir(dir: &UntrustedDir, rel: &Path, dst: &Path, budget: &mut Budget) -> io::Result<()> {
    for (name, kind) in list_in(dir.root(), rel) {
        let from = rel.join(&name);
        let to = dst.join(&name);
        match kind {
            Kind::Dir => {
                budget.take(0)?;
                std::fs::create_dir(&to)?;
                copy_dir(dir, &from, &to, budget)?;
            }
            Kind::File | Kind::Link => {
                let left = budget.max.saturating_sub(budget.bytes);
                match dir.read(&from, left) {
                    Ok(Some(Node::File { bytes, executable })) => {
                        budget.take(bytes.len() as u64)?;
                        write_file(&to, &bytes, executable)?;
                    }
                    Ok(Some(Node::Link(target))) => {
                        budget.take(0)?;
                        link(&target, &to)?;
                    }
                    // Gone meanwhile, or replaced by something else: not copied.
                    Ok(_) => {}
                    Err(super::Refused::TooLarge { .. }) => {
                        return Err(io::Error::other(format!(
                            "{} is larger than what is left of {} MiB",
                            from.display(),
                            budget.max >> 20
                        )))
                    }
                    Err(e) => return Err(io::Error::other(e.to_string())),
                }
            }
            Kind::Special(_) => {}
        }
    }
    Ok(())
}

fn write_file(to: &Path, bytes: &[u8], executable: bool) -> io::Result<()> {
    std::fs::write(to, bytes)?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755))?;
    }
    #[cfg(not(unix))]
    let _ = executable;
    Ok(())
}

#[cfg(unix)]
fn link(target: &Path, to: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, to)
}

#[cfg(not(unix))]
fn link(_: &Path, _: &Path) -> io::Result<()> {
    Ok(())
}
