//! `chatwire-reference`: the Chatwire reference backend. See `chatwire-reference --help`.

fn main() -> std::process::ExitCode {
    chatwire_reference::run_cli(std::env::args_os())
}
