"""AsyncSSH as the independent peer for interop tests of sshtune's native SSH.

server: listens on 127.0.0.1 with every cipher and MAC AsyncSSH has, runs `sink` and
        `source BYTES` like `sshtune serve`, prints `PORT n` once ready.
client: logs into a server with one cipher/MAC, uploads to `sink` and downloads from
        `source`, checks the counts, prints `OK`.
"""

import argparse
import asyncio
import os
import sys

import asyncssh


async def handle(process):
    words = (process.command or "").split()
    if words == ["sink"]:
        process.stdout.write(b"SSHTUNE-READY pid=0 comm=asyncssh tck=100 cpu= stat= quota=\n")
        n = 0
        while True:
            data = await process.stdin.read(1 << 16)
            if not data:
                break
            n += len(data)
        process.stdout.write(f"SSHTUNE-DONE bytes={n} cpu= stat=\n".encode())
        process.exit(0)
    elif len(words) == 2 and words[0] == "source" and words[1].isdigit():
        left = int(words[1])
        block = os.urandom(1 << 16)
        process.stdout.write(b"SSHTUNE-READY pid=0 comm=asyncssh tck=100 cpu= stat= quota=\n")
        while left > 0:
            chunk = block[: min(left, len(block))]
            process.stdout.write(chunk)
            await process.stdout.drain()
            left -= len(chunk)
        process.stdout.write(b"SSHTUNE-DONE rc=0 cpu= stat=\n")
        process.exit(0)
    else:
        process.stderr.write(b"unknown command\n")
        process.exit(127)


async def server(args):
    key = asyncssh.generate_private_key("ssh-ed25519")
    key.write_public_key(args.host_key_pub)
    opts = dict(
        server_host_keys=[key],
        authorized_client_keys=args.authorized_keys,
        encryption_algs="*",
        mac_algs="*",
        process_factory=handle,
        encoding=None,
    )
    if args.rekey_bytes:
        opts["rekey_bytes"] = args.rekey_bytes
    srv = await asyncssh.create_server(None, "127.0.0.1", 0, **opts)
    port = srv.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    await srv.wait_closed()


async def client(args):
    opts = dict(
        known_hosts=args.known_hosts,
        client_keys=[args.key],
        username=args.user,
        encryption_algs=[args.cipher],
        mac_algs=[args.mac] if args.mac else "*",
        agent_path=None,
    )
    if args.rekey_bytes:
        opts["rekey_bytes"] = args.rekey_bytes
    async with asyncssh.connect("127.0.0.1", args.port, **opts) as conn:
        data = os.urandom(args.bytes)
        r = await conn.run("sink", input=data, encoding=None, check=True)
        if f"bytes={args.bytes}".encode() not in r.stdout:
            sys.exit(f"sink counted wrong: {r.stdout!r}")
        r = await conn.run(f"source {args.bytes}", encoding=None, check=True)
        first, rest = r.stdout.split(b"\n", 1)
        if not first.startswith(b"SSHTUNE-READY") or not rest[args.bytes :].startswith(
            b"SSHTUNE-DONE rc=0"
        ):
            sys.exit(f"source output wrong: {len(rest)} bytes")
        print("OK", flush=True)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("server")
    s.add_argument("--host-key-pub", required=True)
    s.add_argument("--authorized-keys", required=True)
    s.add_argument("--rekey-bytes", type=int)
    c = sub.add_parser("client")
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--known-hosts", required=True)
    c.add_argument("--key", required=True)
    c.add_argument("--user", default="tester")
    c.add_argument("--cipher", required=True)
    c.add_argument("--mac")
    c.add_argument("--bytes", type=int, default=1 << 20)
    c.add_argument("--rekey-bytes", type=int)
    args = p.parse_args()
    asyncio.run(server(args) if args.mode == "server" else client(args))


if __name__ == "__main__":
    main()
