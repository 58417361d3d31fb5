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

/// A relay in front of the emulator for one operator's AWS calls, which can refuse every
/// connection as a region whose endpoint is unreachable does: while refusing, its port has no
/// listener (a connect gets ECONNREFUSED: the request never leaves) and the connections it had
/// are closed; then it listens again on the same port. moto_ext's outages cannot refuse a
/// connection, since they know the account only once the request is read. Lives as long as the
/// test process.
pub struct Relay {
    pub port: u16,
    refusing: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<TcpStream>>>,
    /// Connections refused so far: attempts that met no listener are not seen, so this counts the
    /// connections closed when refusing began.
    pub closed: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Relay {
    /// A relay to `target` ("127.0.0.1:4566"), forwarding.
    pub fn start(target: String) -> Relay {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let first = std::net::TcpListener::bind("127.0.0.1:0").expect("bind relay");
        let port = first.local_addr().unwrap().port();
        let refusing = std::sync::Arc::new(AtomicBool::new(false));
        let open = std::sync::Arc::new(std::sync::Mutex::new(Vec::<TcpStream>::new()));
        let relay = Relay {
            port,
            refusing: refusing.clone(),
            open: open.clone(),
            closed: std::sync::Arc::new(AtomicU64::new(0)),
        };
        std::thread::spawn(move || {
            let mut listener = Some(first);
            loop {
                if refusing.load(Ordering::SeqCst) {
                    listener = None; // no listener: connects are refused by the kernel
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                let Some(l) = &listener else {
                    // Listening again on the same port (std sets SO_REUSEADDR).
                    listener = std::net::TcpListener::bind(("127.0.0.1", port)).ok();
                    if let Some(l) = &listener {
                        l.set_nonblocking(true).expect("nonblocking");
                    } else {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    continue;
                };
                l.set_nonblocking(true).expect("nonblocking");
                match l.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).expect("blocking");
                        let Ok(server) = TcpStream::connect(&target) else {
                            continue;
                        };
                        let mut list = open.lock().unwrap();
                        list.retain(|s| s.peer_addr().is_ok());
                        list.push(client.try_clone().unwrap());
                        drop(list);
                        let never = std::sync::Arc::new(AtomicBool::new(false));
                        pipe(
                            client.try_clone().unwrap(),
                            server.try_clone().unwrap(),
                            never.clone(),
                        );
                        pipe(server, client, never);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        relay
    }

    /// The endpoint URL to give the operator.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Refuses every connection (closing those it has) until [`Relay::forward`].
    pub fn refuse(&self) {
        use std::sync::atomic::Ordering;
        self.refusing.store(true, Ordering::SeqCst);
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
            self.closed.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Forwards again.
    pub fn forward(&self) {
        self.refusing
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }
}
