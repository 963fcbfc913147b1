"""Draws the Scratchpad icon (a note card with lines and a dot) as RGBA PNGs
at the sizes Tauri and the .deb need. Pure standard library: run it with
`python3 icons/make_icons.py` after changing the design."""

import pathlib
import struct
import zlib

HERE = pathlib.Path(__file__).resolve().parent


def png(size: int) -> bytes:
    s = size
    px = bytearray()
    r_card = 0.18 * s  # corner radius
    for y in range(s):
        px.append(0)  # filter: none
        for x in range(s):
            u, v = (x + 0.5) / s, (y + 0.5) / s
            # Rounded square with a 6% margin.
            m = 0.06
            inside = m <= u <= 1 - m and m <= v <= 1 - m
            if inside:
                cx = min(max(u, m + 0.18), 1 - m - 0.18)
                cy = min(max(v, m + 0.18), 1 - m - 0.18)
                inside = (u - cx) ** 2 + (v - cy) ** 2 <= 0.18 ** 2
            if not inside:
                px += b"\x00\x00\x00\x00"
                continue
            # Amber to orange, top to bottom.
            r, g, b = 250, int(196 - 60 * v), int(60 - 30 * v)
            # Three text lines of the note.
            for i, (y0, x1) in enumerate([(0.34, 0.74), (0.48, 0.66), (0.62, 0.52)]):
                if 0.26 <= u <= x1 and y0 <= v <= y0 + 0.065:
                    r, g, b = 255, 250, 240
            # The needs-eyes dot.
            if (u - 0.70) ** 2 + (v - 0.66) ** 2 <= 0.075 ** 2:
                r, g, b = 40, 40, 60
            px += bytes((r, g, b, 255))
    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", s, s, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(bytes(px), 9)) + chunk(b"IEND", b"")


for name, size in [("32x32.png", 32), ("128x128.png", 128), ("128x128@2x.png", 256), ("icon.png", 512)]:
    (HERE / name).write_bytes(png(size))
