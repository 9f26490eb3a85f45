//! The `corral` CLI as a client of a Corral server's `/api/v1`: `corral login`
//! stores the server URL and an API token; every other client command reads them.
//!
//! The credentials file is `cli.toml` in `$CORRAL_CONFIG_DIR`, else
//! `$XDG_CONFIG_HOME/corral`, else `~/.config/corral`, written with mode 0600.

mod credentials;
mod notices;
mod output;

pub use api_client::Client;
pub use credentials::{client_for, config_dir, signed_in, Credentials};
pub use notices::Notices;
pub use output::{print_json, print_table, OutputArgs};
