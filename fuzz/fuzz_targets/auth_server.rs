#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sshtune::serve::fuzzing::auth_server(data));
