//! The `ralph` binary: parse the command line, build the runtime, run, map the result to an
//! exit code. Everything else lives in the library.

use clap::Parser;
use ralph::cli::{self, Cli};

fn main() {
    // Inside the sandbox, before anything else: the network forwarder (see process::egress).
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(ralph::process::egress::forward::SUBCOMMAND) {
        std::process::exit(ralph::process::egress::forward::main(&args[2..]));
    }
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(cli::main(cli));
    ralph::process::remove_own_files();
    // Exit without waiting for blocking tasks (a confirmation prompt interrupted by Ctrl-C).
    std::process::exit(code.code());
}
