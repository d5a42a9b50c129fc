//! The one TLS stack of Nomos: rustls with its `ring` provider, for every HTTPS client
//! (models, OIDC keys, PostgreSQL through sqlx's own `ring` build).
//!
//! reqwest is built without a provider of its own (`rustls-no-provider`, which keeps
//! aws-lc-rs and its C build out), so it takes the process-wide default; every reqwest client
//! Nomos builds comes from [`http_client_builder`] or [`http_client`], which install it first.

/// Installs rustls's `ring` provider as the process default, unless one already is.
pub fn install_crypto_provider() {
    // Err means a provider is already installed: that one stays, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A reqwest client builder, with the crypto provider installed.
pub fn http_client_builder() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
}

/// A reqwest client with the default settings, with the crypto provider installed.
pub fn http_client() -> reqwest::Client {
    install_crypto_provider();
    reqwest::Client::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_build_on_the_ring_provider() {
        let client = http_client_builder().build();
        assert!(client.is_ok(), "{client:?}");
        let provider = rustls::crypto::CryptoProvider::get_default().unwrap();
        let ring = rustls::crypto::ring::default_provider();
        let names = |p: &rustls::crypto::CryptoProvider| {
            p.cipher_suites
                .iter()
                .map(|s| format!("{:?}", s.suite()))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(provider), names(&ring));
    }
}
