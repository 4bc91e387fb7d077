#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sshtune::transport::fuzzing::plain_packets(data));
