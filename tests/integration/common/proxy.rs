//! A TCP proxy that can hang, for the frozen-leader and partition tests.

use super::*;

/// A TCP proxy that forwards to `target` until told to hang; hanging, it accepts connections and
/// never answers, and stops forwarding on the connections it already has (as a network partition
/// that leaves sockets open would). Lives as long as the test process.
pub struct Proxy {
    pub port: u16,
    pub hang: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Proxy {
    pub fn start(target: String, hanging: bool) -> Proxy {
        use std::sync::atomic::{AtomicBool, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let port = listener.local_addr().unwrap().port();
        let hang = std::sync::Arc::new(AtomicBool::new(hanging));
        let flag = hang.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for client in listener.incoming().flatten() {
                if flag.load(Ordering::SeqCst) {
                    held.push(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                pipe(
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    flag.clone(),
                );
                pipe(server, client, flag.clone());
            }
        });
        Proxy { port, hang }
    }
}

fn pipe(
    mut from: TcpStream,
    mut to: TcpStream,
    hang: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            // Hanging: keep the socket, forward nothing more.
            while hang.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(100));
            }
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
}
