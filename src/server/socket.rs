//! A client's socket, watched for reading alone.
//!
//! tokio's `UnixStream` asks epoll for both readable and writable edges.
//! On a Unix socket the writer's side is woken every time the peer reads
//! (its buffer space comes back), so each reply the client read woke the
//! engine's idle worker for nothing: one more context switch per round trip
//! (1.6 voluntary switches a request instead of one), paid on the client's
//! core when both share it, or as a cross-core wake-up when they do not.
//! Redis writes straight to the socket and asks for writability only when a
//! write would block; so does this: replies are sent with a plain
//! non-blocking `send`, and only when the socket's buffer is full (a client
//! that does not read its events) is a second descriptor of the socket
//! registered for writability, until the rest of the reply is out.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::UnixStream;

/// The two halves of one client's socket.
pub(super) fn split(stream: UnixStream) -> io::Result<(Reader, Writer)> {
    // `into_std` takes the socket out of tokio's epoll set; it stays non-blocking.
    let fd: OwnedFd = stream.into_std()?.into();
    let read = Arc::new(watch(fd, Interest::READABLE)?);
    Ok((
        Reader { fd: read.clone() },
        Writer {
            fd: read,
            blocked: None,
        },
    ))
}

/// Registers a socket's descriptor with tokio's epoll for `interest` alone.
fn watch(fd: OwnedFd, interest: Interest) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` is open, and stays the same open description,
    // for as long as the `AsyncFd` that owns it.
    unsafe { AsyncFd::register_with_interest(fd, interest) }.map_err(io::Error::from)
}

pub(super) struct Reader {
    fd: Arc<AsyncFd<OwnedFd>>,
}

impl AsyncRead for Reader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let read = ready.try_io(|fd| {
                // SAFETY: `unfilled` is valid for writes of its length.
                let n = unsafe {
                    libc::recv(
                        fd.as_raw_fd(),
                        unfilled.as_mut_ptr().cast(),
                        unfilled.len(),
                        libc::MSG_DONTWAIT,
                    )
                };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(n as usize)
                }
            });
            match read {
                Ok(Ok(n)) => {
                    if n > 0 && n < unfilled.len() {
                        // A short read emptied the socket: the next read
                        // waits for epoll rather than asking again (and
                        // hearing EAGAIN), as tokio's own sockets do. Data
                        // arriving meanwhile is a new edge, not lost.
                        ready.clear_ready();
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                // Not readable after all: readiness cleared, wait again.
                Err(_would_block) => continue,
            }
        }
    }
}

pub(super) struct Writer {
    fd: Arc<AsyncFd<OwnedFd>>,
    /// A second descriptor of the socket, registered for writability while
    /// a write waits for buffer space; `None` otherwise.
    blocked: Option<AsyncFd<OwnedFd>>,
}

impl Writer {
    fn send(&self, buf: &[u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `buf` is valid for reads of its length. MSG_NOSIGNAL:
            // a client gone mid-reply is an error here, not a SIGPIPE.
            let n = unsafe {
                libc::send(
                    self.fd.as_raw_fd(),
                    buf.as_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                )
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl AsyncWrite for Writer {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            match self.send(buf) {
                Ok(n) => {
                    // Out again: stop watching for space (no wake-ups when the client reads).
                    self.blocked = None;
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.blocked.is_none() {
                        let copy = self.fd.get_ref().try_clone()?;
                        self.blocked = Some(watch(copy, Interest::WRITABLE)?);
                    }
                    let blocked = self.blocked.as_ref().expect("set just above");
                    ready!(blocked.poll_write_ready(cx))?.clear_ready();
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // SAFETY: a plain call on a descriptor this writer's socket owns.
        let done = unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_WR) };
        Poll::Ready(if done == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// The epoll event masks registered for descriptor `fd` in this process.
    fn masks(fd: i32) -> Vec<u32> {
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
            let polls = std::fs::read_link(e.path())
                .is_ok_and(|l| l.to_string_lossy().contains("eventpoll"));
            let info = std::fs::read_to_string(format!(
                "/proc/self/fdinfo/{}",
                e.file_name().to_string_lossy()
            ));
            let (true, Ok(info)) = (polls, info) else {
                continue;
            };
            for line in info.lines() {
                let mut words = line.split_whitespace();
                if words.next() == Some("tfd:") && words.next() == Some(&fd.to_string()) {
                    let mask = words.skip_while(|w| *w != "events:").nth(1).unwrap();
                    out.push(u32::from_str_radix(mask, 16).unwrap());
                }
            }
        }
        out
    }

    #[tokio::test]
    async fn a_connection_is_watched_for_reading_alone_and_a_full_buffer_still_drains() {
        let (ours, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let fd = ours.as_raw_fd();
        let (mut reader, mut writer) = split(UnixStream::from_std(ours).unwrap()).unwrap();
        // Read interest only: the peer reading a reply wakes nobody.
        // (tokio's epoll may be open twice, a registry's copy: the same set.)
        let registered = masks(fd);
        assert!(!registered.is_empty(), "the socket is registered");
        for mask in registered {
            assert_eq!(mask & libc::EPOLLOUT as u32, 0, "no EPOLLOUT: {mask:x}");
            assert_ne!(mask & libc::EPOLLIN as u32, 0, "EPOLLIN: {mask:x}");
        }

        theirs.write_all(b"hello\n").unwrap();
        let mut got = [0u8; 16];
        let n = reader.read(&mut got).await.unwrap();
        assert_eq!(&got[..n], b"hello\n");

        // Far more than the socket holds while the peer reads nothing: the
        // write waits (watching for space on a second descriptor), and
        // finishes once the peer reads.
        let big = vec![b'x'; 4 << 20];
        let peer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let mut all = Vec::new();
            let mut chunk = vec![0u8; 1 << 16];
            while all.len() < 4 << 20 {
                let n = theirs.read(&mut chunk).unwrap();
                assert!(n > 0, "the writer closed early");
                all.extend_from_slice(&chunk[..n]);
            }
            (all, theirs)
        });
        tokio::time::timeout(std::time::Duration::from_secs(60), writer.write_all(&big))
            .await
            .expect("a blocked write finishes once the peer reads")
            .unwrap();
        let (all, theirs) = peer.join().unwrap();
        assert!(all == big, "every byte arrived, in order");
        // Out again: the descriptor watched for space is gone.
        assert!(writer.blocked.is_none());

        // The peer gone: reading ends, writing fails (no SIGPIPE).
        drop(theirs);
        assert_eq!(reader.read(&mut got).await.unwrap(), 0);
        assert!(writer.write_all(b"late").await.is_err());
    }
}
