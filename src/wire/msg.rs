//! Message numbers (RFC 4250 §4.1) the tool uses.

pub const DISCONNECT: u8 = 1;
pub const IGNORE: u8 = 2;
pub const UNIMPLEMENTED: u8 = 3;
pub const DEBUG: u8 = 4;
pub const KEXINIT: u8 = 20;

/// RFC 4253 §11.1 reason code used when the probe hangs up on purpose.
pub const DISCONNECT_BY_APPLICATION: u32 = 11;
