"""Trace files as bytes, for the fuzzing corpus and the mutation campaign (issue 26): the fields that
guard a file's integrity (src/trace/trace_file.cpp: the 8-byte magic, the total size as 8 bytes
little-endian, the format version and the form byte, the contents, a CRC-32 of everything before it,
little-endian), so that damage can get past them to the reader's own checks."""
import subprocess
import zlib

MAGIC = b"\x89HTRACE\n"
PLAIN, ZSTD = 0, 1


def with_size_and_crc(data):
    """`data` with its size field and checksum made to match what it holds (at least 20 bytes)."""
    data = bytearray(data)
    data[8:16] = len(data).to_bytes(8, "little")
    data[-4:] = zlib.crc32(bytes(data[:-4])).to_bytes(4, "little")
    return bytes(data)


def contents_start(data):
    """Where the contents start (after the version, a LEB128, and the form byte)."""
    at = 16
    while data[at] & 0x80:
        at += 1
    return at + 2


def plain(data):
    """The same trace with its contents stored as they are (decompressed where they were zstd's)."""
    start = contents_start(data)
    if data[start - 1] != ZSTD:
        return data
    contents = subprocess.run(["zstd", "-d", "-c"], input=data[start:-4], capture_output=True, check=True).stdout
    return with_size_and_crc(data[:start - 1] + bytes([PLAIN]) + contents + b"\0\0\0\0")
