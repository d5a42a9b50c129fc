//! OIDC JWTs against a local JWKS: a P-256 key generated in the test, its JWKS served by a
//! loopback axum server, tokens signed with it.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

use super::{Server, server_with};
use nomos_http::{Auth, Oidc, OidcClient, OidcConfig};

const ISSUER: &str = "https://issuer.test";
const AUDIENCE: &str = "nomos";

struct Issuer {
    pkcs8: Vec<u8>,
    kid: String,
}

impl Issuer {
    fn new(kid: &str) -> (Issuer, Value) {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let point = pair.public_key().as_ref().to_vec();
        assert_eq!(point.len(), 65, "uncompressed P-256 point");
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        (
            Issuer {
                pkcs8: pkcs8.as_ref().to_vec(),
                kid: kid.to_owned(),
            },
            jwk,
        )
    }

    fn sign(&self, claims: Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        let key = EncodingKey::from_ec_der(&self.pkcs8);
        jsonwebtoken::encode(&header, &claims, &key).unwrap()
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn claims(role: &str, exp: u64) -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "ops@example", "exp": exp, "roles": [role]})
}

async fn serve_jwks(keys: Vec<Value>) -> String {
    let jwks = Arc::new(json!({"keys": keys}));
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let jwks = jwks.clone();
            async move { axum::Json((*jwks).clone()) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

async fn oidc_server() -> (Server, Issuer) {
    oidc_server_with("[]").await
}

async fn oidc_server_with(script: &str) -> (Server, Issuer) {
    let (issuer, jwk) = Issuer::new("key-1");
    let jwks_url = serve_jwks(vec![jwk]).await;
    let oidc = Oidc::new(OidcConfig {
        issuer: ISSUER.into(),
        audience: AUDIENCE.into(),
        jwks_url,
        role_claim: "roles".into(),
        operator_value: "nomos-operator".into(),
        viewer_value: "nomos-viewer".into(),
        agent_value: "nomos-agent".into(),
        leeway: Duration::from_secs(5),
        jwks_ttl: Duration::from_secs(300),
        client: Some(OidcClient {
            authorization_endpoint: format!("{ISSUER}/authorize"),
            token_endpoint: format!("{ISSUER}/token"),
            client_id: "nomos-web".into(),
            scope: Some("openid offline_access".into()),
        }),
    });
    let auth = Auth::Required {
        tokens: Vec::new(),
        oidc: Some(Arc::new(oidc)),
        store: None,
    };
    (server_with(script, auth).await, issuer)
}

async fn status(server: &Server, method: reqwest::Method, path: &str, token: &str) -> (u16, Value) {
    let response = server
        .http
        .request(method, server.url(path))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body)
}

#[tokio::test]
async fn an_operator_jwt_may_write() {
    let (server, issuer) = oidc_server().await;
    let token = issuer.sign(claims("nomos-operator", now() + 300));
    let (code, body) = status(&server, reqwest::Method::POST, "/api/sessions", &token).await;
    assert_eq!(code, 201, "{body}");
    let (code, info) = status(&server, reqwest::Method::GET, "/api/info", &token).await;
    assert_eq!(code, 200);
    assert_eq!(info["auth"], "oidc");
}

#[tokio::test]
async fn a_viewer_jwt_reads_but_may_not_approve() {
    let (server, issuer) = oidc_server().await;
    let token = issuer.sign(claims("nomos-viewer", now() + 300));
    let (code, _) = status(&server, reqwest::Method::GET, "/api/sessions", &token).await;
    assert_eq!(code, 200);
    let approval = uuid::Uuid::new_v4();
    let response = server
        .http
        .post(server.url(&format!("/api/approvals/{approval}/decision")))
        .bearer_auth(&token)
        .json(&json!({"decision": "approve"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn an_expired_jwt_is_unauthorized() {
    let (server, issuer) = oidc_server().await;
    let token = issuer.sign(claims("nomos-operator", now() - 600));
    let (code, body) = status(&server, reqwest::Method::GET, "/api/sessions", &token).await;
    assert_eq!(code, 401);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Expired"),
        "{body}"
    );
}

#[tokio::test]
async fn a_jwt_for_another_audience_or_issuer_is_unauthorized() {
    let (server, issuer) = oidc_server().await;
    let mut other_audience = claims("nomos-operator", now() + 300);
    other_audience["aud"] = json!("someone-else");
    let (code, _) = status(
        &server,
        reqwest::Method::GET,
        "/api/sessions",
        &issuer.sign(other_audience),
    )
    .await;
    assert_eq!(code, 401);
    let mut other_issuer = claims("nomos-operator", now() + 300);
    other_issuer["iss"] = json!("https://evil.test");
    let (code, _) = status(
        &server,
        reqwest::Method::GET,
        "/api/sessions",
        &issuer.sign(other_issuer),
    )
    .await;
    assert_eq!(code, 401);
}

#[tokio::test]
async fn a_jwt_signed_by_another_key_is_unauthorized() {
    let (server, _issuer) = oidc_server().await;
    let (forger, _) = Issuer::new("key-1");
    let token = forger.sign(claims("nomos-operator", now() + 300));
    let (code, body) = status(&server, reqwest::Method::GET, "/api/sessions", &token).await;
    assert_eq!(code, 401, "{body}");
}

#[tokio::test]
async fn a_jwt_without_a_nomos_role_is_forbidden() {
    let (server, issuer) = oidc_server().await;
    let token = issuer.sign(claims("payroll", now() + 300));
    let (code, body) = status(&server, reqwest::Method::GET, "/api/sessions", &token).await;
    assert_eq!(code, 403);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no Nomos role"),
        "{body}"
    );
}

#[tokio::test]
async fn the_login_page_reads_the_oidc_client_from_info_without_a_token() {
    let (server, _issuer) = oidc_server().await;
    let response = server
        .http
        .get(server.url("/api/info"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let info: Value = response.json().await.unwrap();
    assert_eq!(info["auth"], "oidc");
    assert_eq!(
        info["oidc"],
        json!({
            "authorization_endpoint": "https://issuer.test/authorize",
            "token_endpoint": "https://issuer.test/token",
            "client_id": "nomos-web",
            "scope": "openid offline_access",
        })
    );
    // The verifier's settings (JWKS, audience, role mapping) are not the login page's business.
    let text = info.to_string();
    for hidden in ["jwks", "audience", "nomos-operator", "roles"] {
        assert!(!text.contains(hidden), "{hidden} leaked in {text}");
    }
    let sessions = server
        .http
        .get(server.url("/api/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(sessions.status(), 401);
}

// rule: AUDIT-1
#[tokio::test]
async fn an_oidc_assent_records_the_preferred_username_alongside_the_subject() {
    let script = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "touch a file"}}
    - {name: propose_plan, arguments: {steps: [{title: "touch it"}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready. Approve?"
- text: "Going ahead."
"#;
    let (server, issuer) = oidc_server_with(script).await;
    let mut claims = claims("nomos-operator", now() + 300);
    claims["preferred_username"] = json!("alice");
    let token = issuer.sign(claims);
    let (code, session) = status(&server, reqwest::Method::POST, "/api/sessions", &token).await;
    assert_eq!(code, 201, "{session}");
    let id = session["id"].as_str().unwrap().to_owned();
    for text in ["touch a file", "approved"] {
        let sent = server
            .http
            .post(server.url(&format!("/api/sessions/{id}/messages")))
            .bearer_auth(&token)
            .json(&json!({"text": text}))
            .send()
            .await
            .unwrap();
        assert_eq!(sent.status(), 202);
        super::settle(&server, &id).await;
    }
    let events = server
        .state
        .agent
        .store()
        .events_after(Some(id.parse().unwrap()), 0, 1000)
        .await
        .unwrap();
    let assent = events
        .iter()
        .find(|e| e.event.kind() == "plan.assent")
        .map(|e| serde_json::to_value(&e.event).unwrap())
        .expect("the approval opened a window");
    assert_eq!(assent["granted_by"], "ops@example", "{assent}");
    assert_eq!(assent["username"], "alice", "{assent}");
    let (_, activity) = status(
        &server,
        reqwest::Method::GET,
        &format!("/api/sessions/{id}/activity"),
        &token,
    )
    .await;
    assert!(
        activity.to_string().contains("by alice (sub ops@example)"),
        "{activity}"
    );
}
