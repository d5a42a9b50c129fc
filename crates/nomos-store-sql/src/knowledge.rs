//! Backend-independent parts of the knowledge graph: splitting search text into words
//! and applying attribute patches to entities.

use nomos_core::ports::store::StoreError;
use serde_json::{Map, Value};

/// Splits search text into words (runs of letters and digits), lowercased.
///
/// Everything else is a separator, so quotes, dashes and operators in the text never
/// reach a backend's query syntax, and words split exactly as the indexed text is split.
pub fn search_terms(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The words to search for, or `None` when there is nothing to search (no word, or a
/// limit of 0), which finds nothing.
pub fn search_words(query: &str, limit: u32) -> Option<Vec<String>> {
    let terms = search_terms(query);
    if terms.is_empty() || limit == 0 {
        return None;
    }
    Some(terms)
}

/// Checks that an entity's attributes are a JSON object.
pub fn require_attributes_object(slug: &str, attributes: &Value) -> Result<(), StoreError> {
    if attributes.is_object() {
        return Ok(());
    }
    Err(StoreError::Invalid(format!(
        "attributes of entity {slug} must be a JSON object, got {attributes}"
    )))
}

/// An attribute patch for an entity, which must be a JSON object.
pub fn attribute_patch<'p>(
    slug: &str,
    patch: &'p Value,
) -> Result<&'p Map<String, Value>, StoreError> {
    match patch {
        Value::Object(patch) => Ok(patch),
        other => Err(StoreError::Invalid(format!(
            "attribute patch for entity {slug} must be a JSON object, got {other}"
        ))),
    }
}

/// Merges a JSON object patch into attributes: `null` removes a key.
pub fn merge_attributes(attributes: &mut Value, patch: &Map<String, Value>) {
    if !attributes.is_object() {
        *attributes = Value::Object(Map::new());
    }
    if let Value::Object(map) = attributes {
        for (key, value) in patch {
            if value.is_null() {
                map.remove(key);
            } else {
                map.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn search_terms_drop_operators_and_quotes() {
        assert_eq!(
            search_terms(r#"nginx AND "proxy -x"#),
            ["nginx", "and", "proxy", "x"]
        );
        assert_eq!(
            search_terms(r#"nginx & !"proxy" -x | (y)"#),
            ["nginx", "proxy", "x", "y"]
        );
        assert!(search_terms(r#"" - & | ! ( ) :*"#).is_empty());
    }

    #[test]
    fn null_in_a_patch_removes_the_key() {
        let mut attributes = json!({"os": "debian", "ram": 8});
        let patch = json!({"os": null, "cpu": 4});
        let patch = attribute_patch("web-1", &patch).unwrap();
        merge_attributes(&mut attributes, patch);
        assert_eq!(attributes, json!({"ram": 8, "cpu": 4}));
    }

    #[test]
    fn a_patch_that_is_not_an_object_is_refused_naming_the_entity() {
        let err = attribute_patch("web-1", &json!([1])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid data: attribute patch for entity web-1 must be a JSON object, got [1]"
        );
    }

    #[test]
    fn attributes_that_are_not_an_object_are_refused_naming_the_entity() {
        let err = require_attributes_object("web-1", &json!("x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"invalid data: attributes of entity web-1 must be a JSON object, got "x""#
        );
        require_attributes_object("web-1", &json!({})).unwrap();
    }
}
