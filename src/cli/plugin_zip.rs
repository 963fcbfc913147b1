//! `pad agent-zero zip FILE`: the plugin as a ZIP that Agent Zero's own
//! installer takes (Plugins → Install → ZIP, `_plugin_installer`
//! `install_from_zip`: it looks for the folder holding `plugin.yaml`). The
//! archive holds one folder, `scratchpad/`, with what `pad agent-zero
//! install` writes — the settings too, when given a URL and a token.
//!
//! Written here rather than with a ZIP crate: a ZIP of a dozen small files
//! is local headers, deflated bodies and a central directory.

use std::io::Write;

/// A ZIP archive of `files` (path, bytes, unix mode), deflated.
pub fn archive(files: &[(String, Vec<u8>, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (path, bytes, mode) in files {
        let mut deflate =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        deflate.write_all(bytes).expect("writes to memory");
        let body = deflate.finish().expect("writes to memory");
        let crc = crc32fast::hash(bytes);
        let offset = out.len() as u32;
        let name = path.as_bytes();
        // The fields a local header and a central record share.
        let mut common = Vec::new();
        common.extend(20u16.to_le_bytes()); // version needed: 2.0 (deflate)
        common.extend(0x0800u16.to_le_bytes()); // flags: names are UTF-8
        common.extend(8u16.to_le_bytes()); // method: deflate
        common.extend([0u8; 4]); // time and date: none (1980-01-01)
        common.extend(crc.to_le_bytes());
        common.extend((body.len() as u32).to_le_bytes());
        common.extend((bytes.len() as u32).to_le_bytes());
        common.extend((name.len() as u16).to_le_bytes());
        common.extend(0u16.to_le_bytes()); // extra field length

        out.extend(0x04034b50u32.to_le_bytes());
        out.extend(&common);
        out.extend(name);
        out.extend(&body);

        central.extend(0x02014b50u32.to_le_bytes());
        central.extend(((3u16 << 8) | 20).to_le_bytes()); // made by: unix
        central.extend(&common);
        central.extend(0u16.to_le_bytes()); // comment length
        central.extend(0u16.to_le_bytes()); // disk number
        central.extend(0u16.to_le_bytes()); // internal attributes
        central.extend(((0o100000 | mode) << 16).to_le_bytes()); // a regular file, its mode
        central.extend(offset.to_le_bytes());
        central.extend(name);
    }
    let at = out.len() as u32;
    let count = files.len() as u16;
    out.extend(&central);
    out.extend(0x06054b50u32.to_le_bytes());
    out.extend([0u8; 4]); // this disk, the directory's disk
    out.extend(count.to_le_bytes());
    out.extend(count.to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(at.to_le_bytes());
    out.extend(0u16.to_le_bytes()); // comment length
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is packed comes back out: each file's bytes through its CRC and
    /// inflated body, read at the offsets the central directory gives.
    #[test]
    fn the_archive_reads_back() {
        let files = vec![
            ("a/x.txt".to_string(), b"hello hello hello".to_vec(), 0o644),
            (
                "a/b/y.json".to_string(),
                br#"{"token":"s"}"#.to_vec(),
                0o600,
            ),
        ];
        let zip = archive(&files);
        let u16_at = |i: usize| u16::from_le_bytes([zip[i], zip[i + 1]]) as usize;
        let u32_at = |i: usize| u32::from_le_bytes(zip[i..i + 4].try_into().unwrap()) as usize;
        let end = zip.len() - 22;
        assert_eq!(u32_at(end), 0x06054b50);
        assert_eq!(u16_at(end + 10), 2);
        let mut at = u32_at(end + 16);
        for (path, bytes, mode) in &files {
            assert_eq!(u32_at(at), 0x02014b50);
            let name_len = u16_at(at + 28);
            assert_eq!(&zip[at + 46..at + 46 + name_len], path.as_bytes());
            assert_eq!(u32_at(at + 38) >> 16, 0o100000 | *mode as usize);
            let local = u32_at(at + 42);
            let (size, crc) = (u32_at(local + 18), u32_at(local + 14));
            let body = local + 30 + u16_at(local + 26);
            let mut inflated = Vec::new();
            std::io::Read::read_to_end(
                &mut flate2::read::DeflateDecoder::new(&zip[body..body + size]),
                &mut inflated,
            )
            .unwrap();
            assert_eq!(&inflated, bytes);
            assert_eq!(crc, crc32fast::hash(bytes) as usize);
            at += 46 + name_len;
        }
    }
}
