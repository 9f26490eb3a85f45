//! Fuzzes the environment-file parser of `corral apply` / `corral plan` (YAML via
//! serde_norway, then checks across entries): any text must give a typed file or
//! errors, each `ORIGIN:LINE…: message`, never a panic or a runaway.

#![no_main]

use domain::environment::EnvFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match EnvFile::parse(&text, "env.yaml") {
        Ok(file) => {
            for cluster in &file.clusters {
                assert!(cluster.line >= 1, "entry lines are 1-based");
                assert!(cluster.size.0 >= 1, "a size of 0 was accepted");
                // apply sends the config to the server as JSON.
                let _ = serde_json::to_string(&cluster.config);
            }
        }
        Err(error) => {
            assert!(!error.problems.is_empty(), "an error without a problem");
            assert!(
                error
                    .problems
                    .iter()
                    .all(|problem| problem.starts_with("env.yaml")),
                "a problem without its origin: {error}"
            );
        }
    }
});
