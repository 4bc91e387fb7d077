#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sshtune::transport::fuzzing::auth_server(data));
