//! Every integration test, one module per area, linked into one binary: each test file used to
//! be a binary of its own, linking the whole library again, which was most of the suite's build
//! time. Tests run in parallel on the harness's threads; `support::lock` keeps the ones that
//! measure apart from all others. One area: `cargo test --release --test it bench_cli::`.

mod support;

mod bench_cli;
mod board_vm;
mod config_cmd;
mod config_list_prop;
mod config_parser;
mod fleet_ansible;
mod forwarded_server;
mod interop_asyncssh;
mod interop_dropbear;
mod interop_openssh;
mod jump_host;
mod layers;
mod locks;
mod native_bench;
mod native_malformed;
mod native_pair;
mod native_threads;
mod pipeline_errors;
mod pipeline_loopback;
mod pipeline_vm;
mod probe_cli;
mod report_html;
mod scenario_cpu;
mod scenario_loopback;
mod scenario_network;
mod scenario_tcp_sink;
mod serve_auth;
mod serve_limits;
mod speed_cli;
mod stale_rules;
mod storage_cli;
mod storage_parse;
mod storage_plan;
mod storage_vm;
