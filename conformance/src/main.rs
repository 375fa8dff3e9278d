//! `chatwire-conformance`: see `chatwire_conformance::cli`.

fn main() -> std::process::ExitCode {
    chatwire_conformance::cli::main(std::env::args_os())
}
