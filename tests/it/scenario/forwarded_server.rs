//! A server behind a loopback address that is another machine (`127.0.0.1:2222` forwarded to a
//! board or a VM) is told apart by its kernel's boot id, not by the address. Here a real sshd
//! runs in a mount namespace whose `/proc/sys/kernel/random/boot_id` reads another kernel's
//! id, as the sshd of a VM behind a QEMU port forward does (`board_vm.rs` reaches a real one
//! that way): no loopback ceiling, no shared-CPU warning, and `same_machine` false. The same
//! sshd without the other id is this machine again.

use crate::support;

use sshtune::embedded::{EmbeddedSshd, Options};
use support::scenario::bench;

const OTHER_BOOT: &str = "0b0a4d5e-1111-4222-8333-944455556666";

fn in_other_boot(dir: &std::path::Path) -> Vec<String> {
    let id = dir.join("boot_id");
    std::fs::write(&id, format!("{OTHER_BOOT}\n")).unwrap();
    let script = format!(
        "mount --bind '{}' /proc/sys/kernel/random/boot_id && exec \"$@\"",
        id.display()
    );
    ["unshare", "-m", "sh", "-c", &script, "sh"]
        .map(String::from)
        .to_vec()
}

const ARGS: [&str; 8] = [
    "--ciphers",
    "aes128-ctr",
    "--direction",
    "upload",
    "--size",
    "32M",
    "--repeat",
    "1",
];

#[test]
fn a_loopback_address_to_another_kernel_is_another_machine() {
    if !support::require_root("a mount namespace needs root") {
        return;
    }
    let _one = support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let server = EmbeddedSshd::start_with(&Options {
        wrapper: in_other_boot(dir.path()),
        ..Options::default()
    })
    .expect("sshd starts in its own mount namespace");
    let (report, explain) = bench(&[], &server.target, &ARGS);
    let warnings = report.warnings.join("\n");
    assert_eq!(report.server.same_machine, Some(false), "{warnings}");
    assert!(!warnings.contains("share this machine"), "{warnings}");
    assert!(!explain.contains("share this machine"), "{explain}");
    assert!(warnings.contains("port forward or tunnel"), "{warnings}");
    assert!(report.ceiling.is_none(), "{:?}", report.ceiling);
    assert!(report.results.iter().all(|r| r.error.is_none()));

    // The same server on this kernel's boot id: loopback, CPUs shared.
    let here = EmbeddedSshd::start("").expect("sshd starts");
    let (report, _) = bench(&[], &here.target, &ARGS);
    assert_eq!(report.server.same_machine, Some(true));
    assert!(
        support::scenario::warns_shared_machine(&report),
        "{:?}",
        report.warnings
    );
    let ceiling = report.ceiling.expect("loopback ceiling");
    assert!(ceiling.method.contains("loopback"), "{}", ceiling.method);
}
