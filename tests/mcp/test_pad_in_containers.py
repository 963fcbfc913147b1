"""`pad` inside a container (Agent Zero's image is Kali rolling; others are
older): the binary needs glibc 2.34 or newer and the C++ runtime, nothing
else — what docs/agent-zero.md states, checked on the binary built here."""

import re
import subprocess

from pad_engine import pad_binary

GLIBC_FLOOR = (2, 34)
GLIBCXX_FLOOR = (3, 4, 30)  # gcc 12's libstdc++ (Debian 12, Ubuntu 22.04)
ALLOWED = {"libc.so.6", "libm.so.6", "libmvec.so.1", "libgcc_s.so.1", "libstdc++.so.6",
           "ld-linux-x86-64.so.2", "libpthread.so.0", "libdl.so.2", "librt.so.1"}


def versions(symbols, prefix):
    return {tuple(int(p) for p in v.split(".")) for v in re.findall(prefix + r"_([0-9.]+)", symbols)}


def test_pad_needs_no_newer_glibc_than_documented_and_no_other_libraries():
    symbols = subprocess.run(["objdump", "-T", pad_binary()], capture_output=True, text=True, check=True).stdout
    assert max(versions(symbols, "GLIBC")) <= GLIBC_FLOOR, max(versions(symbols, "GLIBC"))
    assert max(versions(symbols, "GLIBCXX"), default=(0,)) <= GLIBCXX_FLOOR
    headers = subprocess.run(["objdump", "-p", pad_binary()], capture_output=True, text=True, check=True).stdout
    needed = set(re.findall(r"NEEDED\s+(\S+)", headers))
    assert needed <= ALLOWED, needed - ALLOWED
