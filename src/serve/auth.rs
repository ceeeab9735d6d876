//! Bearer tokens and their scopes.
//!
//! The tokens file holds only SHA-256 digests, so a leaked file grants nothing. A presented
//! token is hashed and compared with every entry in constant time; tokens are never
//! logged, only the name of the entry that matched.
//!
//! A token that verified is remembered, keyed by a digest of it under a hash seeded at
//! random per process, so that the gateway's every request does not pay a SHA-256: the
//! next time, the digest finds the remembered token, which is compared with the presented
//! one in constant time. Only tokens that verified are remembered, and each entry has one,
//! so the memory is bounded by the file; a wrong token always pays the full check. The
//! seeded hash is foldhash rather than SipHash: it only picks a slot (the comparison
//! decides), and on the gateway's every request SipHash and a byte-at-a-time comparison
//! cost more than the rest of the lookup.
//!
//! Scopes: `read` reads every release; `write` writes every release; `write:<release>`
//! writes that release only. Either write scope also allows reads, since an editor has to
//! see what it changes.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::path::Path;
use std::sync::{Arc, RwLock};

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::AppState;
use super::error::ApiError;

/// What a token may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Read,
    WriteAll,
    WriteRelease(String),
}

impl Scope {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "read" => Ok(Self::Read),
            "write" => Ok(Self::WriteAll),
            _ => match s.strip_prefix("write:") {
                Some(release) if !release.is_empty() => Ok(Self::WriteRelease(release.to_owned())),
                _ => Err(format!(
                    "unknown scope {s:?}: use read, write or write:<release>"
                )),
            },
        }
    }
}

/// One entry of the tokens file.
#[derive(Debug)]
pub struct TokenEntry {
    name: String,
    sha256: [u8; 32],
    scopes: Vec<Scope>,
}

/// The loaded tokens file.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    entries: Vec<Arc<TokenEntry>>,
    verified: Arc<Verified>,
}

/// Tokens that verified, by their keyed digest: the token itself, to compare, and its
/// entry.
#[derive(Debug, Default)]
struct Verified {
    keys: foldhash::fast::RandomState,
    /// The key is already a seeded digest: hashing it again only needs to be quick.
    by_digest: RwLock<HashMap<u64, Remembered, foldhash::fast::FixedState>>,
}

/// A token that verified, as presented, and its entry.
type Remembered = (Box<[u8]>, Arc<TokenEntry>);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    #[serde(default)]
    token: Vec<TokenFileEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenFileEntry {
    name: String,
    sha256: String,
    scopes: Vec<String>,
}

/// Why a tokens file was refused.
#[derive(Debug, thiserror::Error)]
pub enum TokensError {
    #[error("cannot read tokens file {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("tokens file is not valid TOML")]
    Syntax(#[source] toml::de::Error),
    #[error("token {name:?}: {problem}")]
    Entry { name: String, problem: String },
}

impl Tokens {
    pub fn load(path: &Path) -> Result<Self, TokensError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokensError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text)
    }

    pub fn parse(text: &str) -> Result<Self, TokensError> {
        let file: TokensFile = toml::from_str(text).map_err(TokensError::Syntax)?;
        let mut entries: Vec<Arc<TokenEntry>> = Vec::with_capacity(file.token.len());
        for e in file.token {
            let bad = |problem: String| TokensError::Entry {
                name: e.name.clone(),
                problem,
            };
            if entries.iter().any(|x| x.name == e.name) {
                return Err(bad("name used twice".into()));
            }
            let digest = hex::decode(e.sha256.trim())
                .ok()
                .and_then(|d| <[u8; 32]>::try_from(d).ok())
                .ok_or_else(|| bad("sha256 must be 64 hex digits".into()))?;
            if e.scopes.is_empty() {
                return Err(bad("has no scopes".into()));
            }
            let scopes = e
                .scopes
                .iter()
                .map(|s| Scope::parse(s))
                .collect::<Result<_, _>>()
                .map_err(bad)?;
            entries.push(Arc::new(TokenEntry {
                name: e.name,
                sha256: digest,
                scopes,
            }));
        }
        Ok(Self {
            entries,
            verified: Arc::default(),
        })
    }

    /// The entry the token belongs to: a token that verified before is found by its keyed
    /// digest, otherwise its SHA-256 is compared with every entry.
    fn find(&self, token: &str) -> Option<Arc<TokenEntry>> {
        let key = self.verified.keys.hash_one(token.as_bytes());
        let remembered = self.verified.by_digest.read().ok().and_then(|cache| {
            let (known, entry) = cache.get(&key)?;
            constant_time_eq::constant_time_eq(known, token.as_bytes()).then(|| entry.clone())
        });
        if remembered.is_some() {
            return remembered;
        }
        let entry = self.verify(token)?;
        if let Ok(mut cache) = self.verified.by_digest.write() {
            cache.insert(key, (token.as_bytes().into(), entry.clone()));
        }
        Some(entry)
    }

    /// The entry whose SHA-256 digest matches; every entry is compared, in constant time
    /// each.
    fn verify(&self, token: &str) -> Option<Arc<TokenEntry>> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for entry in &self.entries {
            if constant_time_eq::constant_time_eq_32(&entry.sha256, &digest) && found.is_none() {
                found = Some(entry);
            }
        }
        found.cloned()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A fresh random token and its tokens-file entry.
pub fn new_token(name: &str, scopes: &[String]) -> Result<(String, String), String> {
    for s in scopes {
        Scope::parse(s)?;
    }
    let secret: [u8; 32] = rand::random();
    let token = format!("sf_{}", hex::encode(secret));
    let digest = hex::encode(Sha256::digest(token.as_bytes()));
    let scopes = scopes
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let entry = format!("[[token]]\nname = {name:?}\nsha256 = \"{digest}\"\nscopes = [{scopes}]\n");
    Ok((token, entry))
}

/// Who is calling: the matched token entry, or nobody.
#[derive(Debug, Clone)]
pub enum Caller {
    Anonymous,
    Token(Arc<TokenEntry>),
}

impl Caller {
    /// The name written to the audit trail.
    pub fn name(&self) -> &str {
        match self {
            Self::Anonymous => "anonymous",
            Self::Token(t) => &t.name,
        }
    }

    /// The token's name; None when anonymous.
    pub fn token_name(&self) -> Option<&str> {
        match self {
            Self::Anonymous => None,
            Self::Token(t) => Some(&t.name),
        }
    }

    pub fn require_read(&self, state: &AppState) -> Result<(), ApiError> {
        match self {
            Self::Anonymous if state.allow_anonymous_reads => Ok(()),
            Self::Anonymous => Err(ApiError::Unauthenticated(
                "a bearer token with the read scope is required",
            )),
            Self::Token(_) => Ok(()), // every scope includes reading
        }
    }

    pub fn require_write(&self, release: &str) -> Result<(), ApiError> {
        match self {
            Self::Anonymous => Err(ApiError::Unauthenticated(
                "a bearer token with a write scope is required",
            )),
            Self::Token(t) => {
                let allowed = t.scopes.iter().any(|s| match s {
                    Scope::WriteAll => true,
                    Scope::WriteRelease(r) => r == release,
                    Scope::Read => false,
                });
                if allowed {
                    Ok(())
                } else {
                    Err(ApiError::Forbidden {
                        needed: format!("write or write:{release}"),
                    })
                }
            }
        }
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
            return Ok(Self::Anonymous);
        };
        let token = value
            .to_str()
            .ok()
            // The scheme is case-insensitive (RFC 9110 §11.1); the token is not.
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .filter(|t| !t.is_empty())
            .ok_or(ApiError::Unauthenticated(
                "authorization header must be `Bearer <token>`",
            ))?;
        state
            .tokens
            .find(token)
            .map(Self::Token)
            .ok_or(ApiError::Unauthenticated("the bearer token is not valid"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_entry_loads_and_matches() {
        let (token, entry) = new_token("editor", &["write:shop.prod".into()]).unwrap();
        let tokens = Tokens::parse(&entry).unwrap();
        let found = tokens.find(&token).unwrap();
        assert_eq!(found.name, "editor");
        assert_eq!(found.scopes, vec![Scope::WriteRelease("shop.prod".into())]);
        assert!(tokens.find("sf_wrong").is_none());
        // Again, from the verified tokens; a token one byte off is still refused.
        assert_eq!(tokens.find(&token).unwrap().name, "editor");
        let mut off = token.clone().into_bytes();
        *off.last_mut().unwrap() ^= 1;
        assert!(tokens.find(std::str::from_utf8(&off).unwrap()).is_none());
        assert_eq!(tokens.verified.by_digest.read().unwrap().len(), 1);
    }

    #[test]
    fn bad_entries_are_refused_with_the_name() {
        let e = Tokens::parse("[[token]]\nname = \"x\"\nsha256 = \"abc\"\nscopes = [\"read\"]\n")
            .unwrap_err();
        assert!(e.to_string().contains("\"x\""), "{e}");
        assert!(new_token("y", &["admin".into()]).is_err());
        assert!(Scope::parse("write:").is_err());
    }
}
