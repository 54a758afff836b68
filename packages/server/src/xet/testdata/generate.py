"""Produce the Xet reference vectors the TypeScript tests check against, with the real client.

Run with the pinned hf_xet (1.8.0 in /work/main/.venv):

    python packages/server/src/xet/testdata/generate.py

Every input is described by segments (see `make_input`) that xet-test-inputs.ts rebuilds byte for
byte, so only the small description and hf_xet's answers are committed, never the inputs.

For each input hf_xet is asked, offline:
  * `hash_files`: the file hash (covers chunking, chunk hashes, the Merkle tree and the file key);
  * an upload to a `local://` CAS directory (the client's own on-disk store, no server): the xorbs
    it serialized, the shard it uploaded (stored by the local CAS with a footer) and its session
    shard (with lookup tables). The chunk list, the terms and the verification hashes of the
    vectors are read from those shards; the small objects are committed as binary fixtures.

LZ4 frames with the features the Rust client never writes (linked blocks, checksums) come from the reference C
implementation, the `lz4` command. Telemetry is turned off, and nothing here touches the network.
"""

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import hf_xet

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")

# Text segments pick words from this list (shared with xet-test-inputs.ts).
WORDS = [
    "tensor", "weights", "layer", "model", "token", "dataset", "shard", "xorb",
    "chunk", "hash", "merkle", "upload", "the", "of", "and", "gradient",
]


def prng(seed, length):
    """SHA-256 in counter mode: sha256(seed + ':' + u64le(counter)), concatenated."""
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += hashlib.sha256(seed.encode() + b":" + struct.pack("<Q", counter)).digest()
        counter += 1
    return bytes(out[:length])


def make_segment(seg):
    kind = seg["kind"]
    n = seg.get("length", 0)
    if kind == "random":
        return prng(seg["seed"], n)
    if kind == "fill":
        return bytes([seg["byte"]]) * n
    if kind == "text":
        out = bytearray()
        for b in prng(seg["seed"], n):
            out += WORDS[b & 15].encode() + (b"\n" if b >= 0xF0 else b" ")
            if len(out) >= n:
                break
        return bytes(out[:n])
    if kind == "ramp":
        # u32 little-endian values start, start+step, ... (byte-grouping friendly)
        count = (n + 3) // 4
        start, step = seg["start"], seg["step"]
        data = b"".join(struct.pack("<I", (start + i * step) & 0xFFFFFFFF) for i in range(count))
        return data[:n]
    if kind == "repeat":
        block = make_input(seg["of"])
        return block * seg["times"]
    raise ValueError(f"unknown segment kind {kind}")


def make_input(segments):
    return b"".join(make_segment(s) for s in segments)


# name -> (segments, compression policy for the local upload, commit the objects as fixtures)
INPUTS = [
    ("empty", [], "auto", False),
    ("one-byte", [{"kind": "fill", "byte": 0x61, "length": 1}], "auto", True),
    ("min-minus-1", [{"kind": "random", "seed": "min-1", "length": 8191}], "auto", True),
    ("min", [{"kind": "random", "seed": "min", "length": 8192}], "auto", False),
    ("min-plus-1", [{"kind": "random", "seed": "min+1", "length": 8193}], "auto", False),
    ("zeros-max-minus-1", [{"kind": "fill", "byte": 0, "length": 131071}], "auto", False),
    ("zeros-max", [{"kind": "fill", "byte": 0, "length": 131072}], "auto", False),
    ("zeros-max-plus-1", [{"kind": "fill", "byte": 0, "length": 131073}], "auto", False),
    ("random-3mib", [{"kind": "random", "seed": "three", "length": 3 * 1024 * 1024}], "auto", False),
    ("random-1mib-b", [{"kind": "random", "seed": "bee", "length": 1024 * 1024 + 17}], "auto", False),
    ("zeros-1mib", [{"kind": "fill", "byte": 0, "length": 1024 * 1024}], "auto", True),
    (
        "repeated-block",
        [{"kind": "repeat", "times": 24, "of": [{"kind": "random", "seed": "block", "length": 100000}]}],
        "auto",
        False,
    ),
    ("text-lz4", [{"kind": "text", "seed": "words", "length": 300000}], "lz4", True),
    ("text-none", [{"kind": "text", "seed": "plain", "length": 150000}], "none", True),
    ("ramp-bg4", [{"kind": "ramp", "start": 1000, "step": 3, "length": 200000}], "bg4-lz4", True),
    ("ramp-auto", [{"kind": "ramp", "start": 7, "step": 257, "length": 180000}], "auto", True),
    (
        "mixed",
        [
            {"kind": "random", "seed": "m1", "length": 50000},
            {"kind": "fill", "byte": 0, "length": 200000},
            {"kind": "text", "seed": "m2", "length": 120000},
            {"kind": "random", "seed": "m3", "length": 70001},
            {"kind": "fill", "byte": 255, "length": 140000},
        ],
        "auto",
        True,
    ),
]


def hexhash(raw):
    """The protocol's string form: each 8-byte group as a little-endian u64 in hex."""
    return "".join(raw[i : i + 8][::-1].hex() for i in range(0, 32, 8))


def parse_shard(data):
    """Just enough of the shard format to read hf_xet's answers back (the tests use shard.ts)."""
    tag = bytes(data[:32])
    version, footer_size = struct.unpack_from("<QQ", data, 32)
    assert tag.startswith(b"HFRepoMetaData") and version == 2
    pos = 48
    files = []
    while True:
        fhash = bytes(data[pos : pos + 32])
        flags, n = struct.unpack_from("<II", data, pos + 32)
        pos += 48
        if fhash == b"\xff" * 32:
            break
        terms = []
        for _ in range(n):
            xh = bytes(data[pos : pos + 32])
            _flags, unpacked, start, end = struct.unpack_from("<IIII", data, pos + 32)
            terms.append({"xorb": hexhash(xh), "start": start, "end": end, "unpackedLength": unpacked})
            pos += 48
        if flags & (1 << 31):
            for t in terms:
                t["verificationHash"] = hexhash(bytes(data[pos : pos + 32]))
                pos += 48
        sha = None
        if flags & (1 << 30):
            # Stored like every other hash: its string form (hexhash) is the usual SHA-256 hex.
            sha = hexhash(bytes(data[pos : pos + 32]))
            pos += 48
        files.append({"fileHash": hexhash(fhash), "terms": terms, "sha256": sha})
    xorbs = {}
    while True:
        xh = bytes(data[pos : pos + 32])
        _flags, n, in_cas, on_disk = struct.unpack_from("<IIII", data, pos + 32)
        pos += 48
        if xh == b"\xff" * 32:
            break
        chunks = []
        for _ in range(n):
            ch = bytes(data[pos : pos + 32])
            start, size, cflags = struct.unpack_from("<III", data, pos + 32)
            chunks.append({"hash": hexhash(ch), "byteStart": start, "length": size, "flags": cflags})
            pos += 48
        xorbs[hexhash(xh)] = {"chunks": chunks, "bytesInXorb": in_cas, "bytesOnDisk": on_disk}
    return {"footerSize": footer_size, "files": files, "xorbs": xorbs}


def config(policy):
    cfg = hf_xet.XetConfig()
    return cfg.with_config(
        {
            "telemetry.enabled": False,
            "xorb.compression_policy": policy,
            "deduplication.global_dedup_query_enabled": False,
        }
    )


def generate(name, segments, policy, keep, work):
    data = make_input(segments)
    path = os.path.join(work, name + ".bin")
    with open(path, "wb") as f:
        f.write(data)

    hashed = hf_xet.hash_files([path])[0]
    vector = {
        "name": name,
        "segments": segments,
        "length": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "fileHash": hashed.hash,
        "compressionPolicy": policy,
    }
    if len(data) == 0:
        vector["chunks"] = []
        return vector

    cas = os.path.join(work, "cas-" + name)
    session = hf_xet.XetSession(config(policy))
    commit = session.new_upload_commit(endpoint="local://" + cas)
    handle = commit.start_upload_bytes(data)
    commit.wait_to_finish()
    meta = handle.result()
    vector["uploadedFileHash"] = meta.xet_info.hash
    vector["uploadedSha256"] = meta.xet_info.sha256

    xorb_dir = os.path.join(cas, "xet", "xorbs", "xorbs")
    shard_dir = os.path.join(cas, "xet", "xorbs", "shards")
    cache_dir = os.path.join(cas, "xet", "shard-cache")
    xorb_files = sorted(f for f in os.listdir(xorb_dir) if not f.endswith(".tagset") and f.startswith("default."))
    (uploaded_shard,) = [f for f in os.listdir(shard_dir) if f.endswith(".mdb")]
    (session_shard,) = [f for f in os.listdir(cache_dir) if f.endswith(".mdb")]
    with open(os.path.join(shard_dir, uploaded_shard), "rb") as f:
        uploaded = f.read()
    with open(os.path.join(cache_dir, session_shard), "rb") as f:
        cached = f.read()

    shard = parse_shard(uploaded)
    (file_info,) = shard["files"]
    assert file_info["fileHash"] == hashed.hash
    chunks = []
    offset = 0
    for term in file_info["terms"]:
        xorb_chunks = shard["xorbs"][term["xorb"]]["chunks"]
        for c in xorb_chunks[term["start"] : term["end"]]:
            chunks.append({"offset": offset, "length": c["length"], "hash": c["hash"]})
            offset += c["length"]
    assert offset == len(data), (name, offset, len(data))
    vector["chunks"] = chunks
    vector["terms"] = file_info["terms"]
    assert file_info["sha256"] == vector["sha256"]
    vector["xorbs"] = []
    for xf in xorb_files:
        xhash = xf.split(".", 1)[1]
        with open(os.path.join(xorb_dir, xf), "rb") as f:
            xorb_bytes = f.read()
        info = shard["xorbs"][xhash]
        entry = {
            "hash": xhash,
            "storedLength": len(xorb_bytes),
            "bytesInXorb": info["bytesInXorb"],
            "bytesOnDisk": info["bytesOnDisk"],
            "chunks": [{"hash": c["hash"], "length": c["length"], "byteStart": c["byteStart"]} for c in info["chunks"]],
        }
        if keep:
            entry["fixture"] = f"{name}.{xhash[:16]}.xorb"
            with open(os.path.join(FIXTURES, entry["fixture"]), "wb") as f:
                f.write(xorb_bytes)
        vector["xorbs"].append(entry)
    if keep:
        vector["uploadedShardFixture"] = f"{name}.uploaded.mdb"
        vector["sessionShardFixture"] = f"{name}.session.mdb"
        with open(os.path.join(FIXTURES, vector["uploadedShardFixture"]), "wb") as f:
            f.write(uploaded)
        with open(os.path.join(FIXTURES, vector["sessionShardFixture"]), "wb") as f:
            f.write(cached)
    return vector


# LZ4 frames written by the reference C implementation (the lz4 command, Debian's package), for the
# frame features the Rust client never writes: linked blocks, block and content checksums, content size.
LZ4_FRAMES = [
    ("lz4-linked-checksums", [{"kind": "text", "seed": "lz4-cli", "length": 150000}], ["-BD", "-BX", "-B4", "--content-size"]),
    (
        "lz4-independent",
        [{"kind": "text", "seed": "lz4-ind", "length": 90000}, {"kind": "fill", "byte": 9, "length": 40000}],
        ["-B4"],
    ),
]


def lz4_frames(work):
    frames = []
    for name, segments, flags in LZ4_FRAMES:
        src = os.path.join(work, name + ".bin")
        with open(src, "wb") as f:
            f.write(make_input(segments))
        fixture = name + ".lz4"
        subprocess.run(["lz4", "-q", "-f", *flags, src, os.path.join(FIXTURES, fixture)], check=True)
        version = subprocess.run(["lz4", "--version"], capture_output=True, text=True).stdout.strip()
        frames.append({"name": name, "segments": segments, "lz4Flags": flags, "lz4": version, "fixture": fixture})
    return frames


def main():
    os.makedirs(FIXTURES, exist_ok=True)
    for f in os.listdir(FIXTURES):
        os.remove(os.path.join(FIXTURES, f))
    work = tempfile.mkdtemp(prefix="xet-vectors-")
    # hf_xet writes its logs and caches under HOME; keep them out of the user's.
    os.environ["HOME"] = work
    try:
        vectors = [generate(name, segs, policy, keep, work) for name, segs, policy, keep in INPUTS]
        frames = lz4_frames(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = {
        "generator": "packages/server/src/xet/testdata/generate.py",
        "hfXetVersion": getattr(hf_xet, "__version__", None) or "1.8.0",
        "vectors": vectors,
        "lz4Frames": frames,
    }
    with open(os.path.join(HERE, "vectors.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"{len(vectors)} vectors written", file=sys.stderr)


if __name__ == "__main__":
    main()
