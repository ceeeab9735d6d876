//! One line for an error and everything that caused it, for logs.
//!
//! Each layer's error `Display` says only its own part and keeps the cause as its source;
//! a log line needs the whole chain, which this writes once, in one place.

/// Displays an error and its sources, separated by `: `.
pub struct ErrorChain<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut next = self.0.source();
        while let Some(e) = next {
            write!(f, ": {e}")?;
            next = e.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorChain;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn every_cause_once_in_order() {
        let e = Outer(std::io::Error::other("inner"));
        assert_eq!(ErrorChain(&e).to_string(), "outer: inner");
    }
}
