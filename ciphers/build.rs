//! Tells the crate which OpenSSL it is built against, so code that exists only in OpenSSL 3
//! (providers, `EVP_MAC`) is compiled only there and the crate still builds on OpenSSL 1.1.
//!
//! `openssl-sys` declares `links = "openssl"` and reports the library's
//! `OPENSSL_VERSION_NUMBER` (hex) to its direct dependents as `DEP_OPENSSL_VERSION_NUMBER`;
//! LibreSSL reports `DEP_OPENSSL_LIBRESSL_VERSION_NUMBER` instead and has neither feature.
//! Without the `openssl` feature neither variable is set and no cfg is emitted.

use std::env;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(ossl300)");
    println!("cargo:rerun-if-env-changed=DEP_OPENSSL_VERSION_NUMBER");
    let Ok(hex) = env::var("DEP_OPENSSL_VERSION_NUMBER") else {
        return;
    };
    if env::var_os("DEP_OPENSSL_LIBRESSL_VERSION_NUMBER").is_some() {
        return;
    }
    match u64::from_str_radix(hex.trim(), 16) {
        Ok(v) if v >= 0x3000_0000 => println!("cargo:rustc-cfg=ossl300"),
        Ok(_) => {}
        Err(_) => println!("cargo:warning=unreadable DEP_OPENSSL_VERSION_NUMBER {hex:?}"),
    }
}
