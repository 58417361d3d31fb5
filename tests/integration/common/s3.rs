//! moto's S3, as a snapshot export writes to it: a bucket made and removed, an object read (S3's
//! REST API, path style, on the emulator's endpoint).

use super::emulator::{aws_request, region};

/// One S3 request: (status code, body).
fn s3_call(method: &str, path: &str) -> (u16, String) {
    let headers = "x-amz-content-sha256: UNSIGNED-PAYLOAD\r\n";
    aws_request((method, path), (&region(), "s3"), headers, "")
}

/// Makes the bucket.
pub fn create_bucket(name: &str) {
    let (code, body) = s3_call("PUT", &format!("/{name}"));
    assert_eq!(code, 200, "CreateBucket {name}: {body}");
}

/// Puts an object in the bucket.
pub fn put_object(bucket: &str, key: &str, body: &str) {
    let headers = "x-amz-content-sha256: UNSIGNED-PAYLOAD\r\n";
    let path = format!("/{bucket}/{key}");
    let (code, answer) = aws_request(("PUT", &path), (&region(), "s3"), headers, body);
    assert_eq!(code, 200, "PutObject {bucket}/{key}: {answer}");
}

/// Removes the bucket and every object in it.
pub fn delete_bucket(name: &str) {
    let (_, listing) = s3_call("GET", &format!("/{name}"));
    for key in listing.split("<Key>").skip(1) {
        let key = key.split("</Key>").next().unwrap_or_default();
        s3_call("DELETE", &format!("/{name}/{key}"));
    }
    let (code, body) = s3_call("DELETE", &format!("/{name}"));
    assert!(code == 204 || code == 200, "DeleteBucket {name}: {body}");
}

/// The object's body; None when the bucket has no such key.
pub fn s3_object(bucket: &str, key: &str) -> Option<String> {
    let (code, body) = s3_call("GET", &format!("/{bucket}/{key}"));
    (code == 200).then_some(body)
}
