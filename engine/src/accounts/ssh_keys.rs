//! Checking a public key a user hands in for their profile: one OpenSSH line of an
//! algorithm sshd accepts today, nothing else. The line is rebuilt from the parsed key
//! (so what reaches `authorized_keys` is exactly algorithm, base64 and a plain
//! comment), and errors never repeat the text: a pasted private key must not end up in
//! a log or an answer.

use russh::keys::ssh_key::Algorithm;
use russh::keys::{HashAlg, PublicKey};

/// The shortest RSA modulus taken (OpenSSH refuses shorter ones since 8.x).
const MIN_RSA_BITS: u32 = 2048;
/// The longest comment kept.
const MAX_COMMENT: usize = 200;
/// The longest line looked at (an RSA 16384-bit key's line is about 2.8 KB).
const MAX_LINE: usize = 8 * 1024;

/// A key ready to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedKey {
    /// `algorithm base64 [comment]`.
    pub line: String,
    /// `SHA256:…`.
    pub fingerprint: String,
    pub algorithm: String,
    pub comment: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("no key: paste one OpenSSH public key line (the contents of a .pub file)")]
    Empty,
    #[error("this is a private key; paste the public key (the .pub file) instead, and keep the private one to yourself")]
    PrivateKey,
    #[error("one key at a time: the text has {0} lines")]
    SeveralLines(usize),
    #[error("key options (such as command= or from=) are not taken: Corral writes the line itself; paste the key without them")]
    Options,
    #[error("not an OpenSSH public key line ({0}); paste the contents of a .pub file, such as `ssh-ed25519 AAAA… you@host`")]
    Unreadable(String),
    #[error("{0} keys are not taken (sshd no longer accepts them); use ssh-ed25519, ecdsa-sha2-* or ssh-rsa of at least {MIN_RSA_BITS} bits")]
    Algorithm(String),
    #[error("this RSA key has {0} bits; at least {MIN_RSA_BITS} are needed (ssh-keygen -t ed25519 makes a better one)")]
    WeakRsa(u32),
    #[error(
        "the key's comment holds control characters or is longer than {MAX_COMMENT} characters"
    )]
    Comment,
    #[error("the text is longer than {MAX_LINE} bytes; a public key line is shorter")]
    TooLong,
}

/// Checks `text` as one public key line (surrounding blank space is dropped).
pub fn check_public_key(text: &str) -> Result<CheckedKey, KeyError> {
    if text.len() > MAX_LINE {
        return Err(KeyError::TooLong);
    }
    let text = text.trim();
    if text.is_empty() {
        return Err(KeyError::Empty);
    }
    if text.contains("PRIVATE KEY") {
        return Err(KeyError::PrivateKey);
    }
    let lines = text.lines().filter(|line| !line.trim().is_empty()).count();
    if lines > 1 || text.contains('\r') {
        return Err(KeyError::SeveralLines(lines.max(2)));
    }
    let key = PublicKey::from_openssh(text).map_err(|error| {
        let first = text.split_whitespace().next().unwrap_or_default();
        if Algorithm::new(first).is_err() && text.split_whitespace().skip(1).any(is_algorithm) {
            KeyError::Options
        } else {
            KeyError::Unreadable(error.to_string())
        }
    })?;
    let algorithm = key.algorithm();
    match &algorithm {
        Algorithm::Ed25519
        | Algorithm::Ecdsa { .. }
        | Algorithm::SkEd25519
        | Algorithm::SkEcdsaSha2NistP256 => {}
        Algorithm::Rsa { .. } => {
            let bits = key
                .key_data()
                .rsa()
                .map_or(0, russh::keys::ssh_key::public::RsaPublicKey::key_size);
            if bits < MIN_RSA_BITS {
                return Err(KeyError::WeakRsa(bits));
            }
        }
        other => return Err(KeyError::Algorithm(other.as_str().to_owned())),
    }
    let comment = key
        .comment()
        .as_str()
        .map_err(|_| KeyError::Comment)?
        .to_owned();
    if comment.len() > MAX_COMMENT || comment.chars().any(char::is_control) {
        return Err(KeyError::Comment);
    }
    let line = key
        .to_openssh()
        .map_err(|error| KeyError::Unreadable(error.to_string()))?;
    Ok(CheckedKey {
        line,
        fingerprint: key.fingerprint(HashAlg::Sha256).to_string(),
        algorithm: algorithm.as_str().to_owned(),
        comment,
    })
}

fn is_algorithm(word: &str) -> bool {
    Algorithm::new(word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED25519: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";

    #[test]
    fn good_keys_are_kept_as_a_rebuilt_line() {
        let checked = check_public_key(&format!("  {ED25519} alice@laptop \n")).unwrap();
        assert_eq!(checked.line, format!("{ED25519} alice@laptop"));
        assert_eq!(checked.algorithm, "ssh-ed25519");
        assert_eq!(checked.comment, "alice@laptop");
        assert!(checked.fingerprint.starts_with("SHA256:"));
        let bare = check_public_key(ED25519).unwrap();
        assert_eq!(
            bare.fingerprint, checked.fingerprint,
            "the comment is not the key"
        );
        assert_eq!(bare.comment, "");
    }

    #[test]
    fn bad_text_is_refused_naming_the_problem_without_repeating_it() {
        let private = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----";
        let cases: &[(&str, KeyError)] = &[
            ("", KeyError::Empty),
            ("  \n ", KeyError::Empty),
            (private, KeyError::PrivateKey),
            (
                &format!("{ED25519} a\n{ED25519} b"),
                KeyError::SeveralLines(2),
            ),
            (
                &format!("command=\"rm -rf /\" {ED25519} a"),
                KeyError::Options,
            ),
            (
                &format!("from=\"10.0.0.0/8\",no-pty {ED25519}"),
                KeyError::Options,
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(&check_public_key(text).unwrap_err(), expected, "{text:?}");
        }
        for text in ["ssh-ed25519 not-base64", "hello world", "ssh-ed25519"] {
            assert!(
                matches!(check_public_key(text), Err(KeyError::Unreadable(_))),
                "{text:?}"
            );
        }
        let message = check_public_key(private).unwrap_err().to_string();
        assert!(!message.contains("b3BlbnNzaC1rZXktdjEAAAA"), "{message}");
        assert!(matches!(
            check_public_key(&"A".repeat(MAX_LINE + 1)),
            Err(KeyError::TooLong)
        ));
        assert!(matches!(
            check_public_key(&format!("{ED25519} bell\u{7}")),
            Err(KeyError::Comment) | Err(KeyError::Unreadable(_))
        ));
    }

    #[test]
    fn rsa_keys_need_2048_bits_and_dsa_is_refused() {
        // Made with ssh-keygen -t rsa -b 2048 (and -b 1024, and -t dsa, below).
        let rsa = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCbsH8W4oMQ7KbhIma+T/JPV04EhJRZ7ggmZRlCokmGl6dsEVGumW4UAW0DCOS06SpS6QOAR/ijjA9F/ppdvjhtYCIcXY5rpLP/4JJqe8TqUZGphAntYzQYLfXmkFkUBYX8tsDEW5mcYV9mc8NATEdKZxYaHFOemtUWLJumNvwVNWmA70mJBYziHpjSl3dAO4Dhc46jp2RzaT25fnpSf7cZj8aK8XaQ+mab+d8XmuiLH14JC6BsZ7zQfRpAVQoZ/OCHwi7cQk2RaNqQxqXyYSgp/5uKOyYpRZCC207Nhdp4bN95GUFUXNahjRIANw/0JqQAbc1tM34+Z4TWeLstE/iD";
        let checked = check_public_key(rsa).unwrap();
        assert_eq!(checked.algorithm, "ssh-rsa");
        let weak = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDl2mibVw0im6gybyjMHZa11SJCPXzx5wIMEu6Rw4adw1z0cY1jdsvOIYz3jgDwpWiB/ExrhIqHv6EsaVpTuNfJBAJ8IbUb1FSPSMYlbWY/15nW6Ruj8MvUOfx5TF1Qsf48SOtvt8MbzKuY3tnsyAnuU9zaZQcX/cW5gdjVaLCUjw==";
        assert!(matches!(check_public_key(weak), Err(KeyError::WeakRsa(bits)) if bits < 2048));
        let dsa = "ssh-dss AAAAB3NzaC1kc3MAAACBAIPhjwSkakBsnZSe6xnPaJkZ1yHYg8iYsoxeMn88B/qivbccrNhr+k7apTb9xNPqPQ8MLBaMMfg+bFDaOqoJNKR8b7ttp1mMAd1fkYex/V4KGjc5lM6KCYoAXX+Ht/0qSsRlE0tIxoC594+Odm2a22pdBr6qGU9BnXTShX1V2dndAAAAFQDLVY90DdXZRX0X5SkrXjpwradLNQAAAIAmo8flh0UCcraTnOmpYqAyn613sPwUz9rVBfuXOBOp2qxHYtW9HQD7ga05UaiPD887/FnFhRxLBfKuFBi1Ft8y0hPDiwbXHT8GABoJ+xpwpvAxRq22GSMewGW+8earaa61LBE+kvWufaR53Qk/R3St2jWBmzordQYDcXsxV2PWIgAAAIADBav05Gm/YBHA3vt6vcZgdQ0PxjlE9U8NsramHLBpBXxT5oBeMei90Y0/bEQSe2Xuoe6N4G64+2Dt24z9d2MeMTXIt+XJnhwtE3RVBuu2nvH0xLSMqfCaIeAqES0P7Z9fGb03MgCqCzyLHl+QEft4bdn6VddSTD80yfAshkY7og==";
        assert_eq!(
            check_public_key(dsa),
            Err(KeyError::Algorithm("ssh-dss".to_owned()))
        );
    }
}
