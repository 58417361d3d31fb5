//! moto's S3, as a snapshot export writes to it: a bucket made and removed, an object read (S3's
//! REST API, path style, on the emulator's endpoint).

use std::io::{Read, Write};
use std::net::TcpStream;

use super::emulator::{emulator_host, region};

/// One S3 request: (status code, body).
fn s3_call(method: &str, path: &str) -> (u16, String) {
    let host = emulator_host();
    let region = region();
    let mut stream = TcpStream::connect(&host).expect("reach the emulator");
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: {host}\r\n\
         Authorization: AWS4-HMAC-SHA256 Credential=test/20261201/{region}/s3/aws4_request, SignedHeaders=host, Signature=0\r\n\
         x-amz-content-sha256: UNSIGNED-PAYLOAD\r\nContent-Length: 0\r\n\r\n"
    )
    .expect("send the S3 call");
    let mut response = String::new();
    (stream.read_to_string(&mut response)).expect("the S3 answer");
    let code = (response.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    (code, body.to_owned())
}

/// Makes the bucket.
pub fn create_bucket(name: &str) {
    let (code, body) = s3_call("PUT", &format!("/{name}"));
    assert_eq!(code, 200, "CreateBucket {name}: {body}");
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
