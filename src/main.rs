//! `pad`: the Scratchpad command line and headless engine.

fn main() -> std::process::ExitCode {
    scratchpad::cli::main()
}
