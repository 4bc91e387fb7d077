#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sshtune::serve::fuzzing::client_kex_reply(data));
