//! The web UI's built files, embedded from `web/dist` at build time (in debug builds they are
//! read from that folder at run time), served at `/` with a single-page-app fallback:
//! an unknown path that is not under `/api/` gets `index.html` on `GET` (and `HEAD`), and
//! a 405 with a JSON body on any other method. When the UI has not been built, a small
//! page says so.

use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Response};
use rust_embed::RustEmbed;

use crate::error::ApiError;

/// The files of `web/dist`.
#[derive(RustEmbed)]
#[folder = "../../web/dist"]
#[allow_missing = true]
struct Dist;

/// Shown when `web/dist` holds no `index.html`.
const PLACEHOLDER: &str = r#"<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Nomos</title></head>
<body style="font-family: sans-serif; max-width: 40rem; margin: 3rem auto">
<h1>Nomos</h1>
<p>The server is running, but the web UI has not been built into this binary yet
(<code>web/dist</code> is empty).</p>
<p>The API is at <a href="/api/openapi.json"><code>/api/openapi.json</code></a>;
liveness at <a href="/healthz"><code>/healthz</code></a>.</p>
</body>
</html>
"#;

/// Serves a UI file, `index.html` for unknown non-API paths, or the placeholder page.
/// The UI is only read: any other method than `GET` or `HEAD` on a path outside the API
/// is a 405 with a JSON body, never the page.
pub async fn serve(method: Method, uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    if path == "api" || path.starts_with("api/") {
        return ApiError::NotFound(format!("no API route {}", uri.path())).into_response();
    }
    if method != Method::GET && method != Method::HEAD {
        let mut response = ApiError::MethodNotAllowed.into_response();
        response
            .headers_mut()
            .insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    if !path.is_empty()
        && let Some(file) = Dist::get(path)
    {
        let mime = mime_guess::from_path(path).first_or_octet_stream();
        let cache = if path.starts_with("assets/") {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        };
        return (
            [
                (header::CONTENT_TYPE, mime.as_ref().to_owned()),
                (header::CACHE_CONTROL, cache.to_owned()),
            ],
            file.data.into_owned(),
        )
            .into_response();
    }
    match Dist::get("index.html") {
        Some(index) => (
            [(header::CACHE_CONTROL, "no-cache")],
            Html(index.data.into_owned()),
        )
            .into_response(),
        None => (StatusCode::OK, Html(PLACEHOLDER)).into_response(),
    }
}
