//! `schedlab completions SHELL` and `schedlab manpage`: shell completion scripts
//! (clap_complete) and man pages (clap_mangen), both generated at run time from the
//! command-line definition in cli.rs, so they cannot fall behind it and nothing generated
//! is kept in the repository.

use crate::atomic::write_atomic;
use crate::cli::Cli;
use crate::commands::emit;
use crate::failure::Failure;
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::path::PathBuf;

/// Examples shown by `schedlab completions --help`.
pub const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  schedlab completions bash > ~/.local/share/bash-completion/completions/schedlab
  schedlab completions zsh > ~/.zfunc/_schedlab      # with fpath+=(~/.zfunc) in ~/.zshrc
  schedlab completions fish > ~/.config/fish/completions/schedlab.fish
  source <(schedlab completions bash)                # this shell only";

/// Examples shown by `schedlab manpage --help`.
pub const MANPAGE_EXAMPLES: &str = "\
Examples:
  schedlab manpage > schedlab.1 && man ./schedlab.1
  schedlab manpage --out-dir ~/.local/share/man/man1   # schedlab.1 + one page per command";

/// `schedlab completions`
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL", value_enum)]
    pub shell: Shell,
}

/// `schedlab manpage`
#[derive(Debug, Args)]
pub struct ManpageArgs {
    /// Write schedlab.1 and one page per command (schedlab-simulate.1, ...) into DIR
    /// (created if missing) instead of printing schedlab.1.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Print the completion script of `args.shell`.
pub fn run_completions(args: &CompletionsArgs) -> Result<(), Failure> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "schedlab", &mut buf);
    let text = String::from_utf8(buf)
        .map_err(|e| Failure::output(format!("completion script is not UTF-8: {e}")))?;
    emit(&text, None)
}

/// The roff text of one man page.
fn render(cmd: clap::Command) -> Result<String, Failure> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .map_err(|e| Failure::output(format!("cannot render the man page: {e}")))?;
    String::from_utf8(buf).map_err(|e| Failure::output(format!("man page is not UTF-8: {e}")))
}

/// Print schedlab.1, or write every page into `--out-dir`.
pub fn run_manpage(args: &ManpageArgs) -> Result<(), Failure> {
    let mut cmd = Cli::command();
    cmd.build();
    let Some(dir) = &args.out_dir else {
        return emit(&render(cmd)?, None);
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::output(format!("cannot create {}: {e}", dir.display())))?;
    let mut pages = vec![("schedlab.1".to_string(), render(cmd.clone())?)];
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        // The page's title is its file name: schedlab-simulate(1).
        // clap names are &'static str; the few leaked bytes live as long as the command.
        let name: &'static str = Box::leak(format!("schedlab-{}", sub.get_name()).into_boxed_str());
        let page = sub.clone().name(name).display_name(name);
        pages.push((format!("{name}.1"), render(page)?));
    }
    for (file, text) in &pages {
        let path = dir.join(file);
        write_atomic(&path, text.as_bytes())
            .map_err(|e| Failure::output(format!("cannot write {}: {e}", path.display())))?;
    }
    if !crate::progress::quiet() {
        eprintln!("wrote {} man pages into {}", pages.len(), dir.display());
    }
    Ok(())
}
