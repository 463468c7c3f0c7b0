//! The `lookout` binary: parse the command line, run the subcommand, exit with its code. Nothing else.

fn main() -> std::process::ExitCode {
    lookout::cli::main()
}
